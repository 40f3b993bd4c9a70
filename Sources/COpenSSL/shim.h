#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/bn.h>
#include <openssl/asn1.h>

/* OPENSSL_free is a macro; these give Swift a callable form. */
static inline void COpenSSL_free(void *pointer) { OPENSSL_free(pointer); }
#endif
