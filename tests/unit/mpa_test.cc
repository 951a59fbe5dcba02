// MPA Request/Reply frames (RFC 5044 section 7.1, RFC 6581) and FPDU
// arithmetic (RFC 5044 section 4).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "wire_builder.h"

using namespace siwx_test;

namespace {

Bytes Key(const std::string& s) { return Bytes(s.begin(), s.end()); }

Bytes Encode(const siwx_mpa_rr& rr) {
    Bytes out(siwx_mpa_rr_len(&rr));
    EXPECT_EQ(siwx_mpa_rr_encode(&rr, out.data()), out.size());
    return out;
}

TEST(MpaFrame, Rev1RequestWithPrivateData) {
    Bytes pd = {1, 2, 3};
    siwx_mpa_rr rr{};
    rr.crc = true;
    rr.rev = 1;
    rr.pd = pd.data();
    rr.pd_len = 3;
    Bytes want = Cat({Key("MPA ID Req Frame"), Bytes{0x40, 0x01}, Be16(3), pd});
    EXPECT_EQ(Hex(Encode(rr)), Hex(want));
}

TEST(MpaFrame, Rev1RejectReply) {
    siwx_mpa_rr rr{};
    rr.reply = true;
    rr.reject = true;
    rr.rev = 1;
    Bytes want = Cat({Key("MPA ID Rep Frame"), Bytes{0x20, 0x01}, Be16(0)});
    EXPECT_EQ(Hex(Encode(rr)), Hex(want));
}

TEST(MpaFrame, Rev2EnhancedParameters) {
    Bytes pd = {0xaa, 0xbb};
    siwx_mpa_rr rr{};
    rr.crc = true;
    rr.rev = 2;
    rr.enhanced = true;
    rr.p2p = true;
    rr.rtr = SIWX_MPA_RTR_SEND | SIWX_MPA_RTR_READ;
    rr.ird = 16;
    rr.ord = 0x3fff;
    rr.pd = pd.data();
    rr.pd_len = 2;
    // P|S|IRD = 1|1|16, W|R|ORD = 0|1|0x3fff, then the ULP's octets.
    Bytes want =
        Cat({Key("MPA ID Req Frame"), Bytes{0x50, 0x02}, Be16(6), Be16(0xc010), Be16(0x7fff), pd});
    EXPECT_EQ(Hex(Encode(rr)), Hex(want));
}

TEST(MpaFrame, DecodeRoundTrip) {
    Bytes pd(100, 0x5c);
    siwx_mpa_rr in{};
    in.reply = true;
    in.crc = true;
    in.rev = 2;
    in.enhanced = true;
    in.rtr = SIWX_MPA_RTR_WRITE;
    in.ird = 3;
    in.ord = 7;
    in.pd = pd.data();
    in.pd_len = uint16_t(pd.size());
    Bytes frame = Encode(in);
    frame.push_back(0xee);  // the first FPDU octet that follows

    siwx_mpa_rr out;
    size_t len = 0;
    siwx_term err;
    ASSERT_EQ(siwx_mpa_rr_decode(frame.data(), frame.size(), &out, &len, &err), SIWX_PARSE_OK);
    EXPECT_EQ(len, frame.size() - 1);
    EXPECT_TRUE(out.reply);
    EXPECT_TRUE(out.crc);
    EXPECT_FALSE(out.markers);
    EXPECT_EQ(out.rev, 2);
    EXPECT_TRUE(out.enhanced);
    EXPECT_FALSE(out.p2p);
    EXPECT_EQ(out.rtr, SIWX_MPA_RTR_WRITE);
    EXPECT_EQ(out.ird, 3);
    EXPECT_EQ(out.ord, 7);
    ASSERT_EQ(out.pd_len, pd.size());
    EXPECT_EQ(Bytes(out.pd, out.pd + out.pd_len), pd);
}

TEST(MpaFrame, DecodeNeedsWholeFrame) {
    siwx_mpa_rr in{};
    in.rev = 1;
    Bytes pd(10, 1);
    in.pd = pd.data();
    in.pd_len = 10;
    Bytes frame = Encode(in);
    siwx_mpa_rr out;
    size_t len;
    siwx_term err;
    for (size_t n = 0; n < frame.size(); ++n)
        EXPECT_EQ(siwx_mpa_rr_decode(frame.data(), n, &out, &len, &err), SIWX_PARSE_MORE) << n;
    EXPECT_EQ(siwx_mpa_rr_decode(frame.data(), frame.size(), &out, &len, &err), SIWX_PARSE_OK);
}

void ExpectInvalid(const Bytes& frame) {
    siwx_mpa_rr out;
    size_t len;
    siwx_term err{};
    EXPECT_EQ(siwx_mpa_rr_decode(frame.data(), frame.size(), &out, &len, &err), SIWX_PARSE_ERROR)
        << Hex(frame);
    EXPECT_EQ(err, siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_INVALID_RR));
}

TEST(MpaFrame, InvalidFramesAreRefused) {
    ExpectInvalid(Cat({Key("MPA ID Xeq Frame"), Bytes{0x40, 1}, Be16(0)}));
    ExpectInvalid(Key("GET / HTTP/1.1"));  // wrong from the first octet
    ExpectInvalid(Cat({Key("MPA ID Req Frame"), Bytes{0x40, 0}, Be16(0)}));
    ExpectInvalid(Cat({Key("MPA ID Req Frame"), Bytes{0x40, 3}, Be16(0)}));
    ExpectInvalid(Cat({Key("MPA ID Req Frame"), Bytes{0x40, 1}, Be16(513), Bytes(513, 0)}));
    ExpectInvalid(Cat({Key("MPA ID Req Frame"), Bytes{0x50, 2}, Be16(2), Bytes{0, 1}}));
}

TEST(MpaFrame, EnhancedFlagIgnoredInRev1) {
    Bytes frame = Cat({Key("MPA ID Req Frame"), Bytes{0x50, 1}, Be16(2), Bytes{7, 8}});
    siwx_mpa_rr out;
    size_t len;
    siwx_term err;
    ASSERT_EQ(siwx_mpa_rr_decode(frame.data(), frame.size(), &out, &len, &err), SIWX_PARSE_OK);
    EXPECT_FALSE(out.enhanced);
    EXPECT_EQ(out.pd_len, 2);
}

TEST(MpaFrame, EncodeRefusesWhatCannotBeSent) {
    siwx_mpa_rr rr{};
    rr.rev = 1;
    rr.pd_len = 513;
    EXPECT_EQ(siwx_mpa_rr_len(&rr), 0u);
    rr.pd_len = 0;
    rr.enhanced = true;  // enhanced needs revision 2
    EXPECT_EQ(siwx_mpa_rr_len(&rr), 0u);
    rr.rev = 2;
    rr.ird = 0x4000;
    EXPECT_EQ(siwx_mpa_rr_len(&rr), 0u);
    rr.ird = 0;
    rr.pd_len = 509;  // 4 octets of parameters + 509 > 512
    EXPECT_EQ(siwx_mpa_rr_len(&rr), 0u);
}

TEST(MpaFpdu, PadMakesFpduMultipleOfFour) {
    for (uint32_t len = 0; len < 64; ++len) {
        uint32_t pad = siwx_mpa_pad(len);
        EXPECT_LT(pad, 4u);
        EXPECT_EQ((2 + len + pad) % 4, 0u) << len;
        EXPECT_EQ(siwx_mpa_fpdu_len(len), 2 + len + pad + 4);
    }
}

TEST(MpaFpdu, MulpduFitsEffectiveMss) {
    for (uint32_t emss = 64; emss < 9000; emss += 7) {
        uint32_t m = siwx_mpa_mulpdu(emss);
        EXPECT_LE(siwx_mpa_fpdu_len(m), emss) << emss;
        EXPECT_GT(siwx_mpa_fpdu_len(m + 1), emss) << emss;
    }
    EXPECT_EQ(siwx_mpa_mulpdu(1460), 1454u);
    EXPECT_EQ(siwx_mpa_mulpdu(3), 0u);
    EXPECT_EQ(siwx_mpa_mulpdu(100000), 65535u);
}

TEST(MpaFpdu, MulpduSpanningSegmentsEndsOnASegmentBoundary) {
    for (uint32_t emss = 536; emss < 9000; emss += 13) {
        EXPECT_EQ(siwx_mpa_mulpdu_segs(emss, 0), siwx_mpa_mulpdu(emss));
        EXPECT_EQ(siwx_mpa_mulpdu_segs(emss, 1), siwx_mpa_mulpdu(emss));
        for (uint32_t segs = 2; segs <= 64; ++segs) {
            uint32_t m = siwx_mpa_mulpdu_segs(emss, segs);
            // The largest whole number of segments (up to segs) that one
            // FPDU can fill, and no more than they hold.
            uint32_t k = std::min(segs, siwx_mpa_fpdu_len(65535) / emss);
            EXPECT_LE(m, 65535u);
            EXPECT_LE(siwx_mpa_fpdu_len(m), k * emss) << emss << " " << segs;
            if (m < 65535) {  // else the length field is the limit
                EXPECT_GT(siwx_mpa_fpdu_len(m + 1), k * emss) << emss << " " << segs;
            }
        }
    }
    // A 1500-octet Ethernet link: 45 segments of 1448 octets at most.
    EXPECT_EQ(siwx_mpa_mulpdu_segs(1448, 45), 45u * 1448 - 6);
    EXPECT_EQ(siwx_mpa_mulpdu_segs(1448, 1000), 45u * 1448 - 6);
    // Loopback's MSS leaves room for one segment only.
    EXPECT_EQ(siwx_mpa_mulpdu_segs(65483, 45), siwx_mpa_mulpdu(65483));
}

TEST(MpaFpdu, TrailerWithAndWithoutCrc) {
    Bytes ulpdu = {1, 2, 3};
    Bytes head = Cat({Be16(3), ulpdu});
    uint32_t crc = siwx_crc32c(SIWX_CRC32C_INIT, head.data(), head.size());
    Bytes out(7);
    ASSERT_EQ(siwx_mpa_trailer(crc, 3, true, out.data()), 7u);
    EXPECT_EQ(Cat({head, out}), Fpdu(ulpdu, true));
    ASSERT_EQ(siwx_mpa_trailer(crc, 3, false, out.data()), 7u);
    EXPECT_EQ(Cat({head, out}), Fpdu(ulpdu, false));
}

}  // namespace
