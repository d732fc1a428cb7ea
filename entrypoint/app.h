/*
 * app.h - forge-entrypoint's top level: subcommand dispatch.
 */
#ifndef EP_APP_H
#define EP_APP_H

/* Runs forge-entrypoint with argv; returns the process exit code. */
int ep_main(int argc, char **argv);

#endif
