#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic: Swift cannot call them. One typed form
 * for each kind of argument keychaind passes. */
static inline CURLcode CCurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode CCurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode CCurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
/* A CA bundle from memory (a login role's caPEM): libcurl copies it (CURL_BLOB_COPY). */
static inline CURLcode CCurl_setopt_ca_blob(CURL *handle, void *data, size_t length) {
    struct curl_blob blob = { .data = data, .len = length, .flags = CURL_BLOB_COPY };
    return curl_easy_setopt(handle, CURLOPT_CAINFO_BLOB, &blob);
}
static inline CURLcode CCurl_setopt_headers(CURL *handle, struct curl_slist *headers) {
    return curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
}
static inline CURLcode CCurl_setopt_resolve(CURL *handle, struct curl_slist *entries) {
    return curl_easy_setopt(handle, CURLOPT_RESOLVE, entries);
}
typedef size_t (*CCurl_write_function)(char *data, size_t size, size_t count, void *context);
static inline CURLcode CCurl_setopt_write_function(CURL *handle, CCurl_write_function function) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, function);
}
static inline CURLcode CCurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
#endif
