// RFC 7306 atomic arithmetic (sections 5.1.1 and 5.1.2) against a literal
// transcription of the RFC pseudo-code, and header validation.
#include <gtest/gtest.h>

#include <random>

#include "wire_builder.h"

using namespace siwx_test;

namespace {

// Section 5.1.1, line by line.
uint64_t RfcFetchAdd(uint64_t original, uint64_t add_data, uint64_t add_mask) {
    uint64_t bit_location = 1;
    uint64_t carry = 0;
    uint64_t remote = 0;
    for (int bit = 0; bit <= 63; ++bit) {
        if (bit != 0) bit_location = bit_location << 1;
        uint64_t val1 = (original & bit_location) >> bit;
        uint64_t val2 = (add_data & bit_location) >> bit;
        uint64_t sum = carry + val1 + val2;
        carry = (sum & 2) >> 1;
        sum = sum & 1;
        if (sum) remote |= bit_location;
        carry = (carry && !(add_mask & bit_location)) ? 1 : 0;
    }
    return remote;
}

// Section 5.1.2.
uint64_t RfcCmpSwap(uint64_t original, uint64_t compare, uint64_t compare_mask, uint64_t swap,
                    uint64_t swap_mask) {
    if (!((compare ^ original) & compare_mask)) return (original & ~swap_mask) | (swap & swap_mask);
    return original;
}

TEST(FetchAdd, ZeroMaskIsPlain64BitAdd) {
    EXPECT_EQ(siwx_fetch_add_masked(1, 2, 0), 3u);
    EXPECT_EQ(siwx_fetch_add_masked(~0ULL, 1, 0), 0u);  // wraps
    EXPECT_EQ(siwx_fetch_add_masked(0x00000000ffffffffULL, 1, 0), 0x0000000100000000ULL);
}

TEST(FetchAdd, CarriesStopAtFieldBorders) {
    // Two 32-bit fields: MSBs at bits 31 and 63.
    const uint64_t mask = 0x8000000080000000ULL;
    EXPECT_EQ(siwx_fetch_add_masked(0x00000000ffffffffULL, 1, mask), 0x0000000000000000ULL);
    EXPECT_EQ(siwx_fetch_add_masked(0x00000001ffffffffULL, 0x0000000100000001ULL, mask),
              0x0000000200000000ULL);
    // Eight 8-bit counters, each wrapping on its own.
    const uint64_t bytes = 0x8080808080808080ULL;
    EXPECT_EQ(siwx_fetch_add_masked(0xff01ff01ff01ff01ULL, 0x0101010101010101ULL, bytes),
              0x0002000200020002ULL);
}

TEST(FetchAdd, AllOnesMaskIsCarrylessXor) {
    // Every bit is its own field: no carries at all.
    EXPECT_EQ(siwx_fetch_add_masked(0xf0f0, 0xff00, ~0ULL), 0xf0f0ULL ^ 0xff00ULL);
}

TEST(FetchAdd, MatchesRfcPseudoCode) {
    std::mt19937_64 rng(7306);
    const uint64_t edges[] = {0,
                              1,
                              ~0ULL,
                              0x8000000000000000ULL,
                              0x7fffffffffffffffULL,
                              0x8080808080808080ULL,
                              0x8000800080008000ULL,
                              0x8000000080000000ULL,
                              0x5555555555555555ULL,
                              0xaaaaaaaaaaaaaaaaULL,
                              0x00000000ffffffffULL};
    for (uint64_t a : edges)
        for (uint64_t b : edges)
            for (uint64_t m : edges)
                ASSERT_EQ(siwx_fetch_add_masked(a, b, m), RfcFetchAdd(a, b, m))
                    << std::hex << a << " + " << b << " mask " << m;
    for (int i = 0; i < 200000; ++i) {
        uint64_t a = rng(), b = rng(), m = rng();
        if (i % 4 == 1) m &= rng();  // sparse masks: longer fields
        if (i % 4 == 2) a |= ~m;     // operands full of ones: carry chains
        ASSERT_EQ(siwx_fetch_add_masked(a, b, m), RfcFetchAdd(a, b, m))
            << std::hex << a << " + " << b << " mask " << m;
    }
}

TEST(CmpSwap, FullMasksAreVerbsCompareAndSwap) {
    EXPECT_EQ(siwx_cmp_swap_masked(5, 5, ~0ULL, 9, ~0ULL), 9u);
    EXPECT_EQ(siwx_cmp_swap_masked(5, 6, ~0ULL, 9, ~0ULL), 5u);
}

TEST(CmpSwap, PartialMasks) {
    // Compare only the low byte; swap only the high half.
    EXPECT_EQ(siwx_cmp_swap_masked(0x11223344556677aaULL, 0xaa, 0xff, 0xdeadbeef00000000ULL,
                                   0xffffffff00000000ULL),
              0xdeadbeef556677aaULL);
    EXPECT_EQ(siwx_cmp_swap_masked(0x11223344556677abULL, 0xaa, 0xff, 0xdeadbeef00000000ULL,
                                   0xffffffff00000000ULL),
              0x11223344556677abULL);
    // Compare mask 0 always matches; swap mask 0 never changes memory.
    EXPECT_EQ(siwx_cmp_swap_masked(1, 2, 0, 3, ~0ULL), 3u);
    EXPECT_EQ(siwx_cmp_swap_masked(1, 1, ~0ULL, 3, 0), 1u);
}

TEST(CmpSwap, MatchesRfcPseudoCode) {
    std::mt19937_64 rng(5120);
    for (int i = 0; i < 200000; ++i) {
        uint64_t orig = rng(), cmp = rng(), cmask = rng(), swap = rng(), smask = rng();
        if (i % 2) cmp = (orig & cmask) | (cmp & ~cmask);  // half of them match
        ASSERT_EQ(siwx_cmp_swap_masked(orig, cmp, cmask, swap, smask),
                  RfcCmpSwap(orig, cmp, cmask, swap, smask));
    }
}

TEST(AtomicApply, DispatchesOnAopcode) {
    siwx_atomic_req r;
    siwx_atomic_req_fetch_add(&r, 1, 2, 0, 10, 0);
    EXPECT_EQ(siwx_atomic_apply(&r, 5), 15u);
    siwx_atomic_req_cmp_swap(&r, 1, 2, 0, 5, ~0ULL, 7, ~0ULL);
    EXPECT_EQ(siwx_atomic_apply(&r, 5), 7u);
    EXPECT_EQ(siwx_atomic_apply(&r, 6), 6u);
}

TEST(AtomicDecode, ReservedAopcodesAreUnexpectedOpcode) {
    for (uint8_t code = 0; code < 16; ++code) {
        Bytes hdr = Cat({Be32(0xfffffff0u | code), Bytes(48, 0)});
        siwx_atomic_req r;
        siwx_term err{};
        bool ok = siwx_atomic_req_decode(hdr.data(), &r, &err);
        EXPECT_EQ(ok, code == 0 || code == 2) << int(code);
        if (ok) {
            EXPECT_EQ(r.aopcode, code);  // the reserved 28 bits are ignored
        } else {
            EXPECT_EQ(err, siwx_term_make(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP,
                                          SIWX_RDMAP_UNEXPECTED_OPCODE));
        }
    }
}

}  // namespace
