/*
 * app.h - forge-runner's top level: subcommand dispatch, --help, --version.
 */
#ifndef RN_APP_H
#define RN_APP_H

/* Runs forge-runner with argv; returns the process exit code. */
int rn_main(int argc, char **argv);

#endif
