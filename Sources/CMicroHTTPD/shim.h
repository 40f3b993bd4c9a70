#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/* The daemon's settings in one struct, because MHD_start_daemon is variadic (Swift cannot call
 * it) and its options mix integers, pointers and function pointers. */
struct CMicroHTTPD_settings {
    unsigned int flags;
    const struct sockaddr *address;      /* the listening address (IPv4 or IPv6) */
    unsigned int thread_pool_size;       /* <= 1: no pool */
    unsigned int connection_limit;
    size_t connection_memory_limit;
    unsigned int connection_timeout;     /* seconds of idle time before a connection is closed */
    unsigned int per_ip_connection_limit;/* 0: unlimited */
    MHD_AcceptPolicyCallback accept_policy;  /* NULL: accept every connection */
    void *accept_policy_cls;
    MHD_AccessHandlerCallback handler;
    void *handler_cls;
    MHD_RequestCompletedCallback completed;
    void *completed_cls;
    MHD_NotifyConnectionCallback connection_notify;  /* NULL: none */
    void *connection_notify_cls;
    const char *https_key_pem;           /* NULL: plain HTTP */
    const char *https_cert_pem;
    const char *https_priorities;        /* GnuTLS priority string; NULL: libmicrohttpd's "NORMAL" */
    unsigned int max_query_parameters;   /* 0: unlimited; see CMicroHTTPD_query_guard */
};

/* Called by libmicrohttpd with the raw request target before it parses the query string. A
 * query with more parameters than the limit would overflow the connection's memory pool, and
 * libmicrohttpd 0.9.75 then neither answers nor reads on until the idle timeout; such a
 * connection is shut down at once instead. The limit travels in the callback's closure pointer.
 * Returns NULL: the per-request state starts empty, as without this callback. */
static inline void *CMicroHTTPD_query_guard(void *cls, const char *uri, struct MHD_Connection *connection)
{
    unsigned int limit = (unsigned int)(uintptr_t)cls;
    const char *query = uri ? strchr(uri, '?') : NULL;
    if (limit == 0 || query == NULL) return NULL;
    unsigned int parameters = 1;
    for (const char *p = query; *p != '\0'; p++)
        if (*p == '&') parameters++;
    if (parameters > limit) {
        const union MHD_ConnectionInfo *info =
            MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (info != NULL) shutdown(info->connect_fd, SHUT_RDWR);
    }
    return NULL;
}

/* libmicrohttpd's unescape callback, for the path and for query names and values alike: leaves
 * them as sent. The router splits the path into segments first and decodes each (so that `%2F`
 * stays inside its segment and `%00` is refused rather than cutting the path); query names and
 * values are decoded as they are copied, with MHD_http_unescape (libmicrohttpd's own callback;
 * `+` is already a space then). */
static inline size_t CMicroHTTPD_unescape(void *cls, struct MHD_Connection *connection, char *text)
{
    (void)cls;
    (void)connection;
    return strlen(text);
}

static inline struct MHD_Daemon *CMicroHTTPD_start_daemon(const struct CMicroHTTPD_settings *s)
{
    struct MHD_OptionItem options[16];
    int n = 0;
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)s->address };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)s->connection_limit, NULL };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)s->connection_memory_limit, NULL };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)s->connection_timeout, NULL };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)s->completed, s->completed_cls };
    if (s->thread_pool_size > 1)
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)s->thread_pool_size, NULL };
    if (s->max_query_parameters > 0)
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)CMicroHTTPD_query_guard,
                                                (void *)(uintptr_t)s->max_query_parameters };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)CMicroHTTPD_unescape, NULL };
    if (s->per_ip_connection_limit > 0)
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)s->per_ip_connection_limit, NULL };
    if (s->connection_notify)
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)s->connection_notify,
                                                s->connection_notify_cls };
    if (s->https_key_pem && s->https_cert_pem) {
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)s->https_key_pem };
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)s->https_cert_pem };
        if (s->https_priorities)
            options[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)s->https_priorities };
    }
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    return MHD_start_daemon(s->flags, 0, s->accept_policy, s->accept_policy_cls, s->handler, s->handler_cls,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/* Header lines RFC 9112 refuses that libmicrohttpd 0.9.75 parses (where a proxy in front may
 * parse them otherwise, or refuse them): a field name that ends or starts in whitespace
 * (`Transfer-Encoding : chunked`, §5.1; libmicrohttpd keeps the space in the name) gives 1, a line
 * continued on the next with leading whitespace (obs-fold, §5.2; libmicrohttpd glues the
 * continuation onto the field's name, copied to a block of its own, outside the request's header
 * block from `method` for MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE bytes) gives 2; 0 otherwise.
 * Only the names' bytes are read; the block is compared by address. */
struct CMicroHTTPD_header_lines {
    const char *start;
    const char *end;
    int problem;
};

static enum MHD_Result CMicroHTTPD_header_line(void *cls, enum MHD_ValueKind kind, const char *name, size_t name_size,
                                               const char *value, size_t value_size)
{
    (void)kind;
    (void)value;
    (void)value_size;
    struct CMicroHTTPD_header_lines *lines = cls;
    if (name == NULL) return MHD_YES;
    if (name_size > 0 && (name[0] == ' ' || name[0] == '\t' || name[name_size - 1] == ' ' || name[name_size - 1] == '\t'))
        lines->problem = 1;
    else if (lines->start != NULL && (name < lines->start || name >= lines->end))
        lines->problem = 2;
    return lines->problem == 0 ? MHD_YES : MHD_NO;
}

static inline int CMicroHTTPD_header_line_problem(struct MHD_Connection *connection, const char *method)
{
    struct CMicroHTTPD_header_lines lines = { NULL, NULL, 0 };
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (info != NULL && method != NULL && info->header_size > 0) {
        lines.start = method;
        lines.end = method + info->header_size;
    }
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, CMicroHTTPD_header_line, &lines);
    return lines.problem;
}

/* The port the daemon listens on (useful when it was asked for port 0). */
static inline uint16_t CMicroHTTPD_bound_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/* The peer's address as text into buffer (MHD_get_connection_info is variadic). */
static inline int CMicroHTTPD_client_address(struct MHD_Connection *connection, char *buffer, socklen_t size)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr) return 0;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        /* Dotted quad by hand: glibc's inet_ntop formats IPv4 with sprintf, a noticeable
           part of a request's cost (the address is written to every audit line). */
        if (size < INET_ADDRSTRLEN) return 0;
        const unsigned char *octets = (const unsigned char *)&((const struct sockaddr_in *)address)->sin_addr;
        char *out = buffer;
        for (int i = 0; i < 4; i++) {
            unsigned octet = octets[i];
            if (octet >= 100) *out++ = (char)('0' + octet / 100);
            if (octet >= 10) *out++ = (char)('0' + octet / 10 % 10);
            *out++ = (char)('0' + octet % 10);
            *out++ = i < 3 ? '.' : '\0';
        }
        return 1;
    }
    if (address->sa_family == AF_INET6)
        return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size) != NULL;
    return 0;
}

/* The pointer a connection-notify callback stored for this connection (its socket context). */
static inline void *CMicroHTTPD_socket_context(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* The connection's socket; -1 if unknown. */
static inline int CMicroHTTPD_connection_fd(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/* Milliseconds since the kernel last received data on this TCP socket (TCP_INFO's
 * tcpi_last_data_recv, counted from the handshake before any data); -1 if not available. */
static inline int64_t CMicroHTTPD_milliseconds_since_data(int fd)
{
    struct tcp_info info;
    socklen_t size = sizeof(info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return -1;
    return (int64_t)info.tcpi_last_data_recv;
}

/* Whether this libmicrohttpd was built with TLS. */
static inline int CMicroHTTPD_has_tls(void) { return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES; }
#endif
