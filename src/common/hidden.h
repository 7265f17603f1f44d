/* hidden.h: HMPI_HIDDEN marks a global that only libhmpi's own code reads. In the
 * shared library such a global is then reached directly, not through the GOT: one
 * dependent load less on the hot paths that read it on every call. */
#ifndef HMPI_COMMON_HIDDEN_H
#define HMPI_COMMON_HIDDEN_H

#define HMPI_HIDDEN __attribute__((visibility("hidden")))

#endif
