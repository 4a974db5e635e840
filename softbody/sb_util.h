/* Error-message helper shared by softbody/ modules. */
#ifndef SB_UTIL_H
#define SB_UTIL_H

/* snprintf into a caller buffer; a NULL buffer or size 0 is ignored. */
void sb_errorf(char *buf, int size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
