// CRC32c known answers: RFC 3720 appendix B.4 (the octets as sent) and the
// common "123456789" check value.
#include <gtest/gtest.h>

#include <numeric>

#include "wire_builder.h"

using namespace siwx_test;

namespace {

Bytes CoreCrcOctets(const Bytes& data) {
    uint32_t crc = siwx_crc32c_final(siwx_crc32c(SIWX_CRC32C_INIT, data.data(), data.size()));
    Bytes out(4);
    siwx_put_le32(out.data(), crc);
    return out;
}

TEST(Crc32c, Rfc3720ZeroOctets) {
    EXPECT_EQ(CoreCrcOctets(Bytes(32, 0)), (Bytes{0xaa, 0x36, 0x91, 0x8a}));
}

TEST(Crc32c, Rfc3720OnesOctets) {
    EXPECT_EQ(CoreCrcOctets(Bytes(32, 0xff)), (Bytes{0x43, 0xab, 0xa8, 0x62}));
}

TEST(Crc32c, Rfc3720Incrementing) {
    Bytes data(32);
    std::iota(data.begin(), data.end(), 0);
    EXPECT_EQ(CoreCrcOctets(data), (Bytes{0x4e, 0x79, 0xdd, 0x46}));
}

TEST(Crc32c, Rfc3720Decrementing) {
    Bytes data(32);
    for (int i = 0; i < 32; ++i) data[i] = uint8_t(31 - i);
    EXPECT_EQ(CoreCrcOctets(data), (Bytes{0x5c, 0xdb, 0x3f, 0x11}));
}

TEST(Crc32c, Rfc3720ReadCommandPdu) {
    Bytes pdu = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    EXPECT_EQ(CoreCrcOctets(pdu), (Bytes{0x56, 0x3a, 0x96, 0xd9}));
}

TEST(Crc32c, CheckValue) {
    const char* s = "123456789";
    EXPECT_EQ(siwx_crc32c_final(siwx_crc32c(SIWX_CRC32C_INIT, s, 9)), 0xe3069283u);
}

TEST(Crc32c, IncrementalEqualsOneShotAndReference) {
    Bytes data(1000);
    for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 37 + 11);
    for (size_t split = 0; split <= data.size(); split += 97) {
        uint32_t crc = siwx_crc32c(SIWX_CRC32C_INIT, data.data(), split);
        crc = siwx_crc32c(crc, data.data() + split, data.size() - split);
        EXPECT_EQ(siwx_crc32c_final(crc), ReferenceCrc32c(data.data(), data.size()));
    }
}

// The table code steps eight octets at a time: every length's tail and
// every start offset must give the bit-at-a-time reference's value.
TEST(Crc32c, EveryTailAndOffsetMatchesReference) {
    Bytes data(64 + 8);
    for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 151 + 29);
    for (size_t off = 0; off < 8; ++off) {
        for (size_t len = 0; len <= 64; ++len) {
            const uint8_t* p = data.data() + off;
            uint32_t crc = siwx_crc32c_final(siwx_crc32c(SIWX_CRC32C_INIT, p, len));
            EXPECT_EQ(crc, ReferenceCrc32c(p, len)) << "offset " << off << ", length " << len;
        }
    }
}

}  // namespace
