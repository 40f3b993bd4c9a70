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
#include <openssl/rsa.h>
#include <openssl/ec.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
/* PEM_read_bio_PUBKEY: KeychainJOSE's PEM public keys (a login role's configured keys). */
#include <openssl/pem.h>

/* OPENSSL_free is a macro; these give Swift a callable form. */
static inline void COpenSSL_free(void *pointer) { OPENSSL_free(pointer); }

/* Key selections for EVP_PKEY_fromdata (macros made of other macros; KeychainClient's SecKey). */
static inline int COpenSSL_selection_keypair(void) { return EVP_PKEY_KEYPAIR; }
static inline int COpenSSL_selection_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }

/* SHA-256 on a state kept on the stack. OpenSSL 3 deprecates SHA256_* in favour of EVP, but an
 * EVP digest allocates a context per call and a context copy allocates too: per audit tag and per
 * bearer token hashed, the EVP paths took 214 and 124 ns against 104 and 51 ns here (the same
 * SHA extension code underneath; docs/decisions.md, "Audit tags: every tag computed, none remembered"). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* SHA-256 of `length` bytes at `data` into `digest` (32 bytes). */
static inline void COpenSSL_sha256(const void *data, size_t length, unsigned char *digest) {
    SHA256_CTX state;
    SHA256_Init(&state);
    SHA256_Update(&state, data, length);
    SHA256_Final(digest, &state);
}

/* An HMAC-SHA-256 key prepared once (RFC 2104): the SHA-256 states after absorbing the key xor
 * ipad and xor opad. Key material: wipe it (OPENSSL_cleanse) before freeing it. */
typedef struct {
    SHA256_CTX inner;
    SHA256_CTX outer;
} COpenSSL_hmac_sha256_key;

/* Prepares `key` from the two 64-byte padded blocks. */
static inline void COpenSSL_hmac_sha256_prepare(
    COpenSSL_hmac_sha256_key *key, const unsigned char *inner_pad, const unsigned char *outer_pad) {
    SHA256_Init(&key->inner);
    SHA256_Update(&key->inner, inner_pad, 64);
    SHA256_Init(&key->outer);
    SHA256_Update(&key->outer, outer_pad, 64);
}

/* HMAC-SHA-256 under `key` of `length` bytes at `message` into `mac` (32 bytes): copies of the
 * prepared states, so no allocation; the copies and the inner digest are wiped after use. */
static inline void COpenSSL_hmac_sha256(
    const COpenSSL_hmac_sha256_key *key, const void *message, size_t length, unsigned char *mac) {
    SHA256_CTX state = key->inner;
    unsigned char inner_digest[32];
    SHA256_Update(&state, message, length);
    SHA256_Final(inner_digest, &state);
    state = key->outer;
    SHA256_Update(&state, inner_digest, sizeof inner_digest);
    SHA256_Final(mac, &state);
    OPENSSL_cleanse(&state, sizeof state);
    OPENSSL_cleanse(inner_digest, sizeof inner_digest);
}
#pragma GCC diagnostic pop
#endif
