/*
 * util.h - small macros every module may use.
 */
#ifndef FORGE_UTIL_H
#define FORGE_UTIL_H

/* The number of elements of the array a (an array, never a pointer: the
 * second sizeof would then silently divide a pointer's size). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The spelling of a macro's value as a string literal, for help texts that
 * must say the number the code uses: FG_XSTR(FG_EXIT_TIMEOUT) is "124". */
#define FG_STR(x) #x
#define FG_XSTR(x) FG_STR(x)

#endif
