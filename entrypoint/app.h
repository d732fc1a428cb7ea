/*
 * app.h - forge-entrypoint's top level: subcommand dispatch.
 *
 * Subcommands: run (the default when the first argument is an option or
 * absent), resolve, config, verdict, lint; plus --help and --version. Each
 * subcommand has its own option table that drives parsing and its --help.
 */
#ifndef EP_APP_H
#define EP_APP_H

/* Runs forge-entrypoint with argv; returns the process exit code. */
int ep_main(int argc, char **argv);

/* The `run` subcommand; argv[0] is "run" (or the program name when run is
 * implied). Returns the exit code of spec section 2. */
int ep_cmd_run(int argc, char **argv);

#endif
