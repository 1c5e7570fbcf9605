/* UTF-8 validation shared by the JSON writer (common/json_write.c: invalid bytes
 * become U+FFFD) and parser (common/json_parse.c: invalid input is refused).
 * Internal to those two files. */
#ifndef VC_JSON_UTF8_H
#define VC_JSON_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (n >= 1 bytes left), 0 if invalid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
size_t vc_json_utf8_len(const unsigned char *s, size_t n);

#endif
