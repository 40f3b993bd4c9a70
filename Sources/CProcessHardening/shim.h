#ifndef CPROCESSHARDENING_SHIM_H
#define CPROCESSHARDENING_SHIM_H
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* prctl(2) is variadic, which Swift cannot call. */

/* Sets the process's "dumpable" attribute (0: no core file; the files in /proc/<pid> belong to root, so
 * other processes of the same user can neither ptrace it nor read its memory). Returns 0 on
 * success, -1 on failure or where there is no such attribute. */
static inline int CProcessHardening_set_dumpable(int dumpable)
{
#ifdef __linux__
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
#else
    (void)dumpable;
    return -1;
#endif
}
#endif
