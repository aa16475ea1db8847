/* How the pairs of test_digest_collisions.py were found: Pollard's rho with distinguished points over a digest
   cut to 64 bits (the old argument digest: the first 16 hex digits of sha256 of the canonical JSON).
   msg(x) = {"account":12|13,"to":"<x in 16 hex digits>"}, its account from x's lowest bit. About 2^32.3 hashes
   for a pair (~6 minutes of one core with SHA extensions); the same loop over 48 bits of
   sha256("statement_ok(<x>,yes)") found the fact pair in 7 s.

   gcc -O2 -march=native -o digest_pairs digest_pairs.c -lcrypto && ./digest_pairs 7
   Not run by the tests (they hold the pairs it printed). */
#include <openssl/sha.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char HEX[] = "0123456789abcdef";

static int msg(uint64_t x, char *out) {
  memcpy(out, "{\"account\":12,\"to\":\"", 20);
  out[12] = (x & 1) ? '2' : '3';
  int n = 20;
  for (int i = 15; i >= 0; i--) out[n + 15 - i] = HEX[(x >> (4 * i)) & 15];
  n += 16;
  out[n++] = '"';
  out[n++] = '}';
  out[n] = 0;
  return n;
}

static uint64_t f(uint64_t x) {
  char m[64];
  unsigned char d[32];
  int n = msg(x, m);
  SHA256_CTX c;
  SHA256_Init(&c);
  SHA256_Update(&c, m, n);
  SHA256_Final(d, &c);
  uint64_t r = 0;
  for (int i = 0; i < 8; i++) r = (r << 8) | d[i];
  return r;
}

#define D 18     /* a distinguished point: its top D bits zero */
#define TBITS 22 /* the table of distinguished points: 2^TBITS slots */
typedef struct { uint64_t dp, start, len; } E;

static uint64_t rnd(void) {
  uint64_t r = 0;
  for (int i = 0; i < 4; i++) r = (r << 16) ^ (uint64_t)(rand() & 0xffff);
  return r;
}

int main(int argc, char **argv) {
  srand(argc > 1 ? (unsigned)atoi(argv[1]) : (unsigned)time(0));
  E *tab = calloc((size_t)1 << TBITS, sizeof(E));
  for (;;) {
    uint64_t s = rnd(), x = s, len = 0;
    while ((x >> (64 - D)) != 0 && len < ((uint64_t)40 << D)) { x = f(x); len++; }
    if ((x >> (64 - D)) != 0) continue; /* a trail in a cycle: dropped */
    size_t h = (size_t)(x * 0x9E3779B97F4A7C15ull >> (64 - TBITS));
    while (tab[h].len && tab[h].dp != x) h = (h + 1) & (((size_t)1 << TBITS) - 1);
    if (!tab[h].len) { tab[h] = (E){x, s, len}; continue; }
    /* two trails reach one point: walk them from the same distance to where they meet */
    uint64_t a = tab[h].start, la = tab[h].len, b = s, lb = len;
    while (la > lb) { a = f(a); la--; }
    while (lb > la) { b = f(b); lb--; }
    if (a == b) continue;
    while (f(a) != f(b)) { a = f(a); b = f(b); }
    char ma[64], mb[64];
    msg(a, ma);
    msg(b, mb);
    printf("%s %s %016llx\n", ma, mb, (unsigned long long)f(a));
    return 0;
  }
}
