/*
 * output_text.c - the text format: the whole output is the answer and the
 * exit status alone tells success (today's behaviour; see output.h).
 */
#include "output.h"

#include <stdlib.h>

static void text_finish(struct ep_output *o)
{
	struct fg_buf b;

	fg_buf_init(&b, EP_OUTPUT_TEXT_MAX + 256);
	ep_capture_text(&o->capture, &b);
	free(o->answer);
	o->answer = fg_buf_detach(&b, NULL);
	o->outcome = EP_OUTCOME_OK;
}

const struct ep_output_ops ep_output_text = {
	.name = "text",
	.message = NULL,
	.finish = text_finish,
};
