#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <libpq-fe.h>

/* PG_DIAG_* are character-literal macros ('C', 'n', ...), which Swift does not import. */
static const int CLibPQ_DIAG_SQLSTATE = PG_DIAG_SQLSTATE;
static const int CLibPQ_DIAG_MESSAGE_PRIMARY = PG_DIAG_MESSAGE_PRIMARY;
static const int CLibPQ_DIAG_CONSTRAINT_NAME = PG_DIAG_CONSTRAINT_NAME;

/* Type OIDs live in the server's catalog headers, not in libpq-fe.h; the ones keychaind binds. */
static const Oid CLibPQ_OID_BOOL = 16;
static const Oid CLibPQ_OID_BYTEA = 17;
static const Oid CLibPQ_OID_INT8 = 20;
static const Oid CLibPQ_OID_INT4 = 23;
static const Oid CLibPQ_OID_TEXT = 25;
#endif
