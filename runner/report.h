/*
 * report.h - `forge-runner report RESULT.json...`: merges the result files
 * of several steps and tasks (spec section 3, written by `run --result`)
 * into one auto-review report, printed as JSON or as a Markdown
 * "## Auto-Review Notes" section for a pull request body.
 * docs/reference/report.md is the user's manual; this header is the
 * contract.
 *
 * Merging: each result becomes one entry keyed "{task_key}__{step}" (a
 * result without a task key: "__{step}"). Entries of different keys are all
 * kept, never overwritten (the reference design lost an exhaustion report
 * when one step produced two). When a key comes twice, the newer result is
 * kept: the one whose last cycle (highest cycle number) has the later
 * timestamp; a result without cycles is older than any with one; on a tie
 * the file named later on the command line wins. Each replacement is said
 * once on stderr and in the JSON "warnings".
 *
 * An entry is "open" when its review_state is exhausted, stalled or failed;
 * its open feedback is the last cycle's feedback when that cycle was
 * rejected, else null.
 *
 * Exit codes of rn_cmd_report() (forge/exit.h: FG_EXIT_OK, FG_EXIT_FAILED,
 * FG_EXIT_USAGE, FG_EXIT_RUNTIME):
 *   0   every input was read and the report written;
 *   1   at least one input could not be read or is not a result file: each
 *       such input is named on stderr ("forge-runner: warning: cannot read
 *       'x': ...") and in the JSON "warnings", skipped, and the report of
 *       the others is still written;
 *   2   usage error (no input, unknown option, bad --format): nothing
 *       written;
 *   125 the report could not be written (--output failed, stdout error).
 */
#ifndef RN_REPORT_H
#define RN_REPORT_H

#include "forge/opts.h"
#include "result.h"

/* Largest result file read: whatever `run` can write (result.h), 72 MiB;
 * it is also read with RN_RESULT_MAX_TOKENS JSON tokens at most. */
#define RN_REPORT_MAX_INPUT RN_RESULT_MAX_BYTES
/* Largest report produced. */
#define RN_REPORT_MAX_OUTPUT (256u * 1024 * 1024)
/* Bytes of a feedback line shown in a Markdown table cell before "…". */
#define RN_REPORT_CELL_MAX 120
/* Files of the last cycle's change set listed in the Markdown (the JSON
 * and the cycle file list up to FG_CHANGES_MAX). */
#define RN_REPORT_CHANGES_SHOWN 20

/* The option table (for --help and the doc-vs-help test); ends with name == NULL. */
extern const struct fg_opt rn_report_options[];

/*
 * Runs the report subcommand. argv[0] is the subcommand's name ("report"),
 * argv[1..] its options and result files; argv is borrowed. Prints the
 * report to stdout (or writes --output atomically), diagnostics to stderr,
 * and returns the exit code above. Not tied to any loop; safe to call
 * several times in one process (keeps no state between calls).
 */
int rn_cmd_report(int argc, char **argv);

#endif
