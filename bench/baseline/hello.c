/*
 * hello.c: the bare libmicrohttpd server the benchmarks measure keychaind against.
 *
 * It does the least an HTTP/1.1 server on libmicrohttpd can do: every GET (the scripts ask
 * /hello) is answered 200 with one fixed 40-byte JSON body from a response built once at start;
 * any other method is 405 with `Allow: GET`. Connections stay open (keep-alive). What keychaind
 * adds to a request is what it costs beyond this server, measured in the same run.
 *
 * Its threading is keychaind's (MicroHTTPDServer): libmicrohttpd's own polling thread with epoll
 * and a pool of worker threads. The pool has MHD_THREADS threads, two by default (keychaind's
 * default is two per core).
 *
 *   usage: hello [PORT]            listens on every address, port PORT (default 8299)
 *   env:   MHD_THREADS=N           worker threads (default 2; 0 or 1: no pool)
 *
 * SIGINT or SIGTERM stops it. Built and run by bench/baseline/run.sh.
 */
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HELLO_BODY "{\"status\":\"ok\",\"server\":\"bare baseline\"}"
_Static_assert(sizeof HELLO_BODY - 1 == 40, "the body is 40 bytes, as the numbers in docs/benchmarks.md assume");

static struct MHD_Response *hello;      /* 200, the body above */
static struct MHD_Response *only_get;   /* 405, empty, Allow: GET */

/* libmicrohttpd calls this at least twice per request: first with the headers only, then with
 * each piece of a body, then once more with none left. A response queued on the first call is
 * an early answer after which libmicrohttpd closes the connection, so the first call only marks
 * the request as seen, and the answer goes out on a later call. */
static enum MHD_Result answer(void *closure, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *body,
                              size_t *body_size, void **request)
{
    static char seen;
    (void)closure; (void)url; (void)version; (void)body;
    if (*request == NULL) {
        *request = &seen;
        return MHD_YES;
    }
    if (*body_size > 0) {           /* a body is read and dropped */
        *body_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0)
        return MHD_queue_response(connection, MHD_HTTP_METHOD_NOT_ALLOWED, only_get);
    return MHD_queue_response(connection, MHD_HTTP_OK, hello);
}

int main(int argc, char **argv)
{
    unsigned long port = argc > 1 ? strtoul(argv[1], NULL, 10) : 8299;
    const char *threads_text = getenv("MHD_THREADS");
    unsigned int threads = threads_text ? (unsigned int)strtoul(threads_text, NULL, 10) : 2;
    if (port == 0 || port > 65535) {
        fprintf(stderr, "hello: bad port %s\n", argv[1]);
        return 2;
    }

    hello = MHD_create_response_from_buffer(sizeof HELLO_BODY - 1, (void *)HELLO_BODY, MHD_RESPMEM_PERSISTENT);
    only_get = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (hello == NULL || only_get == NULL)
        return 1;
    MHD_add_response_header(hello, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(only_get, MHD_HTTP_HEADER_ALLOW, MHD_HTTP_METHOD_GET);

    /* The stop signals are blocked before libmicrohttpd starts its threads, which inherit the
     * mask, so that only the main thread's sigwait below receives them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, (uint16_t)port, NULL, NULL,
        answer, NULL, MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "hello: libmicrohttpd could not start on port %lu\n", port);
        return 1;
    }
    fprintf(stderr, "hello: libmicrohttpd %s, epoll, %u worker thread(s), http://127.0.0.1:%lu/hello\n",
            MHD_get_version(), threads, port);

    int signal_number;
    sigwait(&stop, &signal_number);
    MHD_stop_daemon(daemon);
    MHD_destroy_response(hello);
    MHD_destroy_response(only_get);
    return 0;
}
