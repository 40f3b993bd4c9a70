#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it. */
static inline sqlite3_destructor_type CSQLite_transient(void) { return SQLITE_TRANSIENT; }

/* sqlite3_db_config is variadic; this wraps the (int, int*) form. */
static inline int CSQLite_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}
#endif
