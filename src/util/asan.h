/* util/asan.h - MGW_ASAN is 1 when the translation unit is built with
 * AddressSanitizer (gcc's __SANITIZE_ADDRESS__ or clang's feature test),
 * else 0.  Code that replaces or inspects the allocator steps aside
 * under it: ASan's own allocator must see every block. */
#ifndef MGW_UTIL_ASAN_H
#define MGW_UTIL_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define MGW_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MGW_ASAN 1
#endif
#endif

#ifndef MGW_ASAN
#define MGW_ASAN 0
#endif

#endif
