#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it. */
static inline sqlite3_destructor_type CSQLite_transient(void) { return SQLITE_TRANSIENT; }

/* sqlite3_db_config is variadic; this wraps the (int, int*) form. */
static inline int CSQLite_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

/* sqlite3_config is variadic. Turns off SQLite's memory statistics, which keychaind never reads:
   with them on, every sqlite3_malloc and sqlite3_free takes one process-wide mutex, which the
   libmicrohttpd workers' reader connections contended for on every point read. Must run before
   SQLite initialises (before the first connection opens); returns SQLITE_MISUSE after. */
static inline int CSQLite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
