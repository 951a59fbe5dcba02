// The receive stream parser: event sequence independent of how the stream
// is cut, and every malformed input class mapped to its Terminate cause.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "wire_builder.h"

using namespace siwx_test;

namespace {

const siwx_term kLlpCrc = {SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_CRC};
const siwx_term kLlpLength = {SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_LENGTH_MISMATCH};
const siwx_term kBadRdmapVersion = {SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP,
                                    SIWX_RDMAP_INVALID_VERSION};
const siwx_term kUnexpectedOpcode = {SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP,
                                     SIWX_RDMAP_UNEXPECTED_OPCODE};
const siwx_term kMalformedRdmap = {SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP,
                                   SIWX_RDMAP_CATASTROPHIC_STREAM};
const siwx_term kInvalidQn = {SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_INVALID_QN};
const siwx_term kMsnRange = {SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_MSN_RANGE};
const siwx_term kInvalidMo = {SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_INVALID_MO};

Bytes Send(uint32_t msn, const Bytes& payload, bool last = true, uint32_t mo = 0) {
    return Fpdu(Cat({Untagged(last, SIWX_OP_SEND, 0, msn, mo), payload}));
}

Bytes Imm(uint32_t msn, const Bytes& data, uint8_t op = SIWX_OP_IMM) {
    return Fpdu(Cat({Untagged(true, op, 0, msn, 0), data}));
}

Bytes AtomicReq(uint32_t msn, size_t len, uint8_t aop = 0) {
    Bytes hdr = Cat({Be32(aop), Be32(1), Be32(2), Be64(8), Be64(1), Be64(0), Be64(0), Be64(~0ULL)});
    hdr.resize(len);
    return Fpdu(Cat({Untagged(true, SIWX_OP_ATOMIC_REQ, 1, msn, 0), hdr}));
}

void ExpectTerm(const Bytes& stream, const siwx_term& want, size_t segments_before = 0) {
    for (size_t chunk : {size_t(0), size_t(1), size_t(3)}) {
        RxRecord rec = ParseStream(stream, chunk);
        EXPECT_TRUE(rec.error) << "chunk " << chunk << ": " << Hex(stream);
        EXPECT_EQ(rec.term, want) << "chunk " << chunk;
        EXPECT_EQ(rec.segments.size(), segments_before) << "chunk " << chunk;
    }
}

TEST(RxParse, SameEventsForEveryChunking) {
    Bytes big(3000);
    for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i);
    Bytes stream = Cat({Send(1, {1, 2, 3}), Fpdu(Cat({Tagged(true, SIWX_OP_WRITE, 5, 0x10), big})),
                        Imm(2, {9, 9, 9, 9, 0, 0, 0, 0}), Send(3, {}), AtomicReq(1, 52)});
    RxRecord whole = ParseStream(stream, 0);
    ASSERT_FALSE(whole.error) << whole.term;
    ASSERT_EQ(whole.segments.size(), 5u);
    EXPECT_EQ(whole.segment_ends, 5);
    EXPECT_EQ(whole.payloads[1], big);
    for (size_t chunk = 1; chunk < 40; ++chunk) {
        RxRecord rec = ParseStream(stream, chunk);
        ASSERT_FALSE(rec.error) << chunk;
        ASSERT_EQ(rec.segments.size(), 5u) << chunk;
        EXPECT_EQ(rec.payloads, whole.payloads) << chunk;
        EXPECT_EQ(rec.segment_ends, 5) << chunk;
    }
}

// siwx_rx_feed_fast() cuts payload slices inline: the same events, slices
// and verdicts as siwx_rx_feed(), however the stream is cut and whoever
// folds the CRC.
TEST(RxParse, FastFeedGivesTheSameEvents) {
    Bytes big(3000);
    for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i * 3);
    for (bool crc_on : {true, false}) {
        Bytes stream =
            Cat({Fpdu(Cat({Untagged(true, SIWX_OP_SEND, 0, 1, 0), Bytes{1, 2, 3}}), crc_on),
                 Fpdu(Cat({Tagged(true, SIWX_OP_WRITE, 5, 0x10), big}), crc_on),
                 Fpdu(Cat({Untagged(true, SIWX_OP_SEND, 0, 2, 0), Bytes{}}), crc_on)});
        for (RxCrc crc : {RxCrc::kParser, RxCrc::kPlaceAndSkip}) {
            for (size_t chunk = 0; chunk < 50; ++chunk) {
                RxRecord fast = ParseStream(stream, chunk, crc_on, crc, RxFeed::kFast);
                RxRecord plain = ParseStream(stream, chunk, crc_on, crc, RxFeed::kPlain);
                ASSERT_FALSE(fast.error) << chunk << " " << fast.term;
                ASSERT_FALSE(plain.error) << chunk << " " << plain.term;
                EXPECT_EQ(fast.segments.size(), 3u) << chunk;
                EXPECT_EQ(fast.segment_ends, 3) << chunk;
                EXPECT_EQ(fast.payloads, plain.payloads) << chunk;
                EXPECT_EQ(fast.payloads[1], big) << chunk;
            }
            if (!crc_on) continue;
            Bytes bad = stream;
            bad[40 + 1500] ^= 0x04;  // inside the Write's payload
            for (size_t chunk : {size_t(0), size_t(7), size_t(1000)}) {
                RxRecord fast = ParseStream(bad, chunk, true, crc, RxFeed::kFast);
                EXPECT_TRUE(fast.error) << chunk;
                EXPECT_EQ(fast.term, kLlpCrc) << chunk;
                EXPECT_EQ(fast.segment_ends, 1) << chunk;
            }
        }
    }
}

// Two decoded segments alike, field by field (a Terminate echoes raw).
void ExpectSameSegment(const siwx_rx_seg& a, const siwx_rx_seg& b, size_t chunk) {
    EXPECT_EQ(a.op, b.op) << chunk;
    EXPECT_EQ(a.ulpdu_len, b.ulpdu_len) << chunk;
    EXPECT_EQ(a.payload_len, b.payload_len) << chunk;
    EXPECT_EQ(a.ddp_hdr_len, b.ddp_hdr_len) << chunk;
    EXPECT_EQ(a.rdmap_hdr_len, b.rdmap_hdr_len) << chunk;
    EXPECT_EQ(a.ddp.opcode, b.ddp.opcode) << chunk;
    EXPECT_EQ(a.ddp.tagged, b.ddp.tagged) << chunk;
    EXPECT_EQ(a.ddp.last, b.ddp.last) << chunk;
    EXPECT_EQ(a.ddp.stag, b.ddp.stag) << chunk;
    EXPECT_EQ(a.ddp.to, b.ddp.to) << chunk;
    EXPECT_EQ(a.ddp.inval_stag, b.ddp.inval_stag) << chunk;
    EXPECT_EQ(a.ddp.qn, b.ddp.qn) << chunk;
    EXPECT_EQ(a.ddp.msn, b.ddp.msn) << chunk;
    EXPECT_EQ(a.ddp.mo, b.ddp.mo) << chunk;
    EXPECT_EQ(Bytes(a.raw, a.raw + a.ddp_hdr_len), Bytes(b.raw, b.raw + b.ddp_hdr_len)) << chunk;
    EXPECT_EQ(a.u.read.sink_stag, b.u.read.sink_stag) << chunk;
    EXPECT_EQ(a.u.read.src_to, b.u.read.src_to) << chunk;
}

// A data segment's headers lying whole in a chunk are decoded in one pass
// (siwx_rx_feed_headers()): the same segments as the plain parser's, and
// each malformed header refused with the same Terminate, however cut.
TEST(RxParse, FastHeadersDecodeAndRefuseAsThePlainParser) {
    const Bytes one{1};
    const Bytes good =
        Cat({Send(1, {1, 2}),
             Fpdu(Cat({Tagged(false, SIWX_OP_WRITE, 7, 0x1234567890ULL), Bytes{5, 6, 7}})),
             Fpdu(Cat({Untagged(true, SIWX_OP_SEND_SE_INVAL, 0, 2, 0, 0xabcd), Bytes{8}})),
             Fpdu(Cat({Tagged(true, SIWX_OP_READ_RESP, 9, 0x40), one})),
             Fpdu(Cat({Untagged(false, SIWX_OP_SEND, 0, 3, 0), Bytes{1, 2, 3, 4}})),
             Fpdu(Cat({Untagged(true, SIWX_OP_SEND, 0, 3, 4), one}))});
    // The fast entry applies when the caller folds the CRC, or there is none
    const std::vector<std::pair<bool, RxCrc>> modes = {{true, RxCrc::kPlaceAndSkip},
                                                       {false, RxCrc::kParser}};
    for (const auto& [crc_on, crc] : modes) {
        for (size_t chunk : {size_t(0), size_t(1), size_t(5), size_t(23)}) {
            RxRecord fast = ParseStream(good, chunk, crc_on, crc, RxFeed::kFast);
            RxRecord plain = ParseStream(good, chunk, crc_on, crc, RxFeed::kPlain);
            ASSERT_FALSE(fast.error) << chunk << " " << fast.term;
            ASSERT_EQ(fast.segments.size(), 6u) << chunk;
            ASSERT_EQ(plain.segments.size(), 6u) << chunk;
            for (size_t i = 0; i < 6; ++i)
                ExpectSameSegment(fast.segments[i], plain.segments[i], chunk);
            EXPECT_EQ(fast.payloads, plain.payloads) << chunk;
        }
    }
    const std::vector<std::pair<Bytes, siwx_term>> bad = {
        {Fpdu(Cat({Ctrl(true, true, SIWX_OP_WRITE, 2, 1), Be32(5), Be64(0), one})),
         {SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, SIWX_DDP_T_INVALID_VERSION}},
        {Fpdu(
             Cat({Ctrl(false, true, SIWX_OP_SEND, 0, 1), Be32(0), Be32(0), Be32(2), Be32(0), one})),
         {SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_INVALID_VERSION}},
        {Fpdu(Cat({Ctrl(true, true, SIWX_OP_WRITE, 1, 2), Be32(5), Be64(0), one})),
         kBadRdmapVersion},
        {Fpdu(Cat({Untagged(true, SIWX_OP_WRITE, 0, 2, 0), one})), kUnexpectedOpcode},
        {Fpdu(Cat({Tagged(true, SIWX_OP_SEND, 5, 0), one})), kUnexpectedOpcode},
        {Fpdu(Cat({Tagged(true, 0xe, 5, 0), one})), kUnexpectedOpcode},
        {Fpdu(Cat({Untagged(true, SIWX_OP_SEND, 1, 2, 0), one})), kInvalidQn},
        {Fpdu(Cat({Untagged(true, SIWX_OP_SEND, 0, 3, 0), one})), kMsnRange},
        {Fpdu(Cat({Untagged(true, SIWX_OP_SEND, 0, 2, 4), one})), kInvalidMo},
        {Fpdu(Cat({Ctrl(true, true, SIWX_OP_WRITE), Be32(5), Be32(0)})), kLlpLength},
    };
    for (const auto& [fpdu, want] : bad) {
        const Bytes stream = Cat({Send(1, {1}), fpdu});
        for (size_t chunk : {size_t(0), size_t(1), size_t(7)}) {
            RxRecord fast = ParseStream(stream, chunk, true, RxCrc::kPlaceAndSkip, RxFeed::kFast);
            RxRecord plain = ParseStream(stream, chunk, true, RxCrc::kPlaceAndSkip, RxFeed::kPlain);
            EXPECT_TRUE(fast.error) << chunk << ": " << Hex(fpdu);
            EXPECT_EQ(fast.term, want) << chunk << ": " << Hex(fpdu);
            EXPECT_EQ(plain.term, want) << chunk << ": " << Hex(fpdu);
            EXPECT_EQ(fast.segments.size(), 1u) << chunk << ": " << Hex(fpdu);
            EXPECT_EQ(fast.segment_ends, 1) << chunk;
        }
    }
}

TEST(RxParse, PartialFpduGivesNoEnd) {
    Bytes stream = Send(1, {1, 2, 3, 4, 5, 6});
    for (size_t cut = 0; cut < stream.size(); ++cut) {
        RxRecord rec = ParseStream(Bytes(stream.begin(), stream.begin() + long(cut)), 0);
        EXPECT_FALSE(rec.error);
        EXPECT_EQ(rec.segment_ends, 0) << cut;
    }
}

TEST(RxParse, MultiSegmentSendAdvancesMoThenMsn) {
    Bytes stream = Cat({Send(1, {1, 2}, false, 0), Send(1, {3, 4, 5}, false, 2),
                        Send(1, {6}, true, 5), Send(2, {7})});
    RxRecord rec = ParseStream(stream, 0);
    ASSERT_FALSE(rec.error) << rec.term;
    EXPECT_EQ(rec.segments.size(), 4u);
}

// The payload octets of the message in progress, after every prefix of the
// stream: they count a message's FPDUs, the one in progress octet by octet
// as its payload arrives, until the end of its last.
TEST(RxParse, MessageOctetsCountUntilTheLastSegment) {
    const Bytes first = Send(1, {1, 2}, false, 0);
    const Bytes middle = Send(1, {3, 4, 5}, false, 2);
    const Bytes last = Send(1, {6}, true, 5);
    const Bytes single = Send(2, {9});
    const Bytes write = Fpdu(Cat({Tagged(false, SIWX_OP_WRITE, 5, 0x10), Bytes{7, 7, 7, 7}}));
    const Bytes write_end = Fpdu(Cat({Tagged(true, SIWX_OP_WRITE, 5, 0x14), Bytes{8}}));
    const Bytes stream = Cat({first, middle, last, single, write, write_end});
    struct Expected {
        size_t size;
        uint32_t payload;
        uint32_t after;  // the count once the FPDU is whole
    };
    const std::vector<Expected> fpdus = {{first.size(), 2, 2}, {middle.size(), 3, 5},
                                         {last.size(), 1, 0},  {single.size(), 1, 0},
                                         {write.size(), 4, 4}, {write_end.size(), 1, 0}};
    siwx_rx rx;
    siwx_rx_init(&rx, true);
    EXPECT_EQ(siwx_rx_message_octets(&rx), 0u);
    size_t pos = 0;
    uint32_t base = 0;
    for (const auto& f : fpdus) {
        // MPA length field, then the ULPDU: its headers, then the payload
        const size_t ulpdu = (size_t(stream[pos]) << 8) | stream[pos + 1];
        const size_t hdr = 2 + ulpdu - f.payload;
        for (size_t i = 0; i < f.size; ++i, ++pos) {
            const size_t got = i < hdr ? 0 : std::min<size_t>(i - hdr, f.payload);
            EXPECT_EQ(siwx_rx_message_octets(&rx), base + got) << "at " << pos;
            siwx_rx_event ev;
            ASSERT_EQ(siwx_rx_feed(&rx, &stream[pos], 1, &ev), 1u);
            ASSERT_NE(ev.type, SIWX_RX_ERROR) << pos;
        }
        base = f.after;
        EXPECT_EQ(siwx_rx_message_octets(&rx), base) << "after " << pos;
    }
    // a stream that failed is in no message
    const Bytes bad = Fpdu(Cat({Ctrl(false, false, SIWX_OP_SEND, 2), Bytes(16, 0)}));
    const Bytes dying = Cat({first, bad});
    siwx_rx_init(&rx, true);
    siwx_rx_event ev{};
    for (size_t off = 0; off < dying.size() && ev.type != SIWX_RX_ERROR;) {
        off += siwx_rx_feed(&rx, &dying[off], dying.size() - off, &ev);
        if (off == first.size()) {
            EXPECT_EQ(siwx_rx_message_octets(&rx), 2u);
        }
    }
    EXPECT_EQ(ev.type, SIWX_RX_ERROR);
    EXPECT_EQ(siwx_rx_message_octets(&rx), 0u);
}

TEST(RxParse, QueuesHaveIndependentMsns) {
    Bytes stream = Cat({Send(1, {1}), AtomicReq(1, 52), Send(2, {2}), AtomicReq(2, 52)});
    EXPECT_FALSE(ParseStream(stream, 0).error);
}

TEST(RxParse, CrcOffIgnoresCrcField) {
    Bytes stream = Fpdu(Cat({Untagged(true, SIWX_OP_SEND, 0, 1, 0), Bytes{1, 2, 3}}), false);
    EXPECT_FALSE(ParseStream(stream, 0, false).error);
    stream.back() ^= 0xff;
    EXPECT_FALSE(ParseStream(stream, 0, false).error);
    EXPECT_TRUE(ParseStream(stream, 0, true).error);
}

TEST(RxErrors, CrcMismatchInPayloadPadOrCrc) {
    Bytes good = Send(1, {1, 2, 3});  // 2 + 18 + 3 = 23: one octet of PAD
    ASSERT_FALSE(ParseStream(good, 0).error);
    // CRC, PAD, last and first payload octet. (A flipped header octet is
    // caught by the header checks, before the CRC is known.)
    for (size_t pos : {good.size() - 1, good.size() - 5, good.size() - 6, size_t(20)}) {
        Bytes bad = good;
        bad[pos] ^= 0x01;
        // Whole (headers and trailer checked where they lie) and gathered;
        // by the parser and, the trailer checked inline, by the fast feed
        // while the caller folds the payload.
        for (size_t chunk : {size_t(0), size_t(1), size_t(3), size_t(21)}) {
            for (RxCrc crc : {RxCrc::kParser, RxCrc::kPlaceAndSkip}) {
                for (RxFeed feed : {RxFeed::kFast, RxFeed::kPlain}) {
                    RxRecord rec = ParseStream(bad, chunk, true, crc, feed);
                    EXPECT_TRUE(rec.error) << pos << " " << chunk;
                    EXPECT_EQ(rec.term, kLlpCrc) << pos << " " << chunk;
                    EXPECT_EQ(rec.segment_ends, 0) << pos << " " << chunk;
                }
            }
        }
    }
}

// The caller may fuse the CRC with its copy (siwx_rx_place): the same
// events and payload for every chunking, the same verdict on a flipped
// payload octet, and a caller that folds nothing fails every check.
TEST(RxPlace, CallerFoldsTheCrc) {
    Bytes big(5000);
    for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i * 7);
    Bytes stream = Cat(
        {Send(1, {1, 2, 3}), Fpdu(Cat({Tagged(true, SIWX_OP_WRITE, 5, 0x10), big})), Send(2, {})});
    for (size_t chunk : {size_t(0), size_t(1), size_t(7), size_t(1500)}) {
        RxRecord rec = ParseStream(stream, chunk, true, RxCrc::kPlaceAndSkip);
        ASSERT_FALSE(rec.error) << chunk << " " << rec.term;
        EXPECT_EQ(rec.segment_ends, 3) << chunk;
        EXPECT_EQ(rec.payloads[1], big) << chunk;
        EXPECT_EQ(rec.payloads[0], (Bytes{1, 2, 3})) << chunk;
    }
    for (size_t pos : {size_t(21), size_t(30 + 2500), size_t(30 + 4999)}) {
        Bytes bad = stream;
        bad[pos] ^= 0x10;
        RxRecord rec = ParseStream(bad, 3, true, RxCrc::kPlaceAndSkip);
        EXPECT_TRUE(rec.error) << pos;
        EXPECT_EQ(rec.term, kLlpCrc) << pos;
    }
    RxRecord forgot = ParseStream(stream, 0, true, RxCrc::kForgotten);
    EXPECT_TRUE(forgot.error);
    EXPECT_EQ(forgot.term, kLlpCrc);
    EXPECT_FALSE(ParseStream(Fpdu(Cat({Untagged(true, SIWX_OP_SEND, 0, 1, 0), big}), false), 5,
                             false, RxCrc::kPlaceAndSkip)
                     .error);
}

TEST(RxErrors, UlpduShorterThanDdpHeader) {
    // 17 octets cannot hold an 18-octet untagged header; 13 not a tagged one.
    Bytes untagged = Untagged(true, SIWX_OP_SEND, 0, 1, 0);
    untagged.resize(17);
    ExpectTerm(Fpdu(untagged), kLlpLength);
    Bytes tagged = Tagged(true, SIWX_OP_WRITE, 1, 0);
    tagged.resize(13);
    ExpectTerm(Fpdu(tagged), kLlpLength);
    ExpectTerm(Fpdu(Bytes{}), kLlpLength);
}

TEST(RxErrors, BadDdpVersion) {
    for (uint8_t dv : {0, 2, 3}) {
        ExpectTerm(
            Fpdu(Cat({Ctrl(false, true, SIWX_OP_SEND, dv), Be32(0), Be32(0), Be32(1), Be32(0)})),
            siwx_term{SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_INVALID_VERSION});
        ExpectTerm(Fpdu(Cat({Ctrl(true, true, SIWX_OP_WRITE, dv), Be32(1), Be64(0)})),
                   siwx_term{SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, SIWX_DDP_T_INVALID_VERSION});
    }
}

TEST(RxErrors, BadRdmapVersion) {
    for (uint8_t rv : {0, 2, 3})
        ExpectTerm(
            Fpdu(Cat({Ctrl(false, true, SIWX_OP_SEND, 1, rv), Be32(0), Be32(0), Be32(1), Be32(0)})),
            kBadRdmapVersion);
}

TEST(RxErrors, UnknownOpcodes) {
    for (uint8_t op = 0xc; op <= 0xf; ++op) {
        ExpectTerm(Fpdu(Untagged(true, op, 0, 1, 0)), kUnexpectedOpcode);
        ExpectTerm(Fpdu(Tagged(true, op, 1, 0)), kUnexpectedOpcode);
    }
}

TEST(RxErrors, TaggedFlagMustMatchOpcode) {
    ExpectTerm(Fpdu(Cat({Ctrl(true, true, SIWX_OP_SEND), Be32(1), Be64(0)})), kUnexpectedOpcode);
    ExpectTerm(Fpdu(Cat({Ctrl(true, true, SIWX_OP_ATOMIC_REQ), Be32(1), Be64(0)})),
               kUnexpectedOpcode);
    ExpectTerm(Fpdu(Untagged(true, SIWX_OP_WRITE, 0, 1, 0)), kUnexpectedOpcode);
    ExpectTerm(Fpdu(Untagged(true, SIWX_OP_READ_RESP, 1, 1, 0)), kUnexpectedOpcode);
}

TEST(RxErrors, WrongQueueNumberForOpcode) {
    ExpectTerm(Fpdu(Untagged(true, SIWX_OP_SEND, 1, 1, 0)), kInvalidQn);
    ExpectTerm(Fpdu(Cat({Untagged(true, SIWX_OP_IMM, 3, 1, 0), Bytes(8, 0)})), kInvalidQn);
    ExpectTerm(Fpdu(Cat({Untagged(true, SIWX_OP_ATOMIC_REQ, 0, 1, 0), Bytes(52, 0)})), kInvalidQn);
    ExpectTerm(Fpdu(Cat({Untagged(true, SIWX_OP_ATOMIC_REQ, 3, 1, 0), Bytes(52, 0)})), kInvalidQn);
    ExpectTerm(Fpdu(Cat({Untagged(true, SIWX_OP_ATOMIC_RESP, 1, 1, 0), Bytes(12, 0)})), kInvalidQn);
    ExpectTerm(Fpdu(Cat({Untagged(true, SIWX_OP_READ_REQ, 0, 1, 0), Bytes(28, 0)})), kInvalidQn);
    ExpectTerm(Fpdu(Cat({Untagged(true, SIWX_OP_TERMINATE, 0, 1, 0), Bytes(4, 0)})), kInvalidQn);
    ExpectTerm(Fpdu(Untagged(true, SIWX_OP_SEND, 77, 1, 0)), kInvalidQn);
}

TEST(RxErrors, ImmediateDataMustBeEightOctets) {
    for (size_t len : {0, 1, 7, 9, 16, 64}) {
        ExpectTerm(Imm(1, Bytes(len, 0xab)), kMalformedRdmap);
        ExpectTerm(Imm(1, Bytes(len, 0xab), SIWX_OP_IMM_SE), kMalformedRdmap);
    }
    EXPECT_FALSE(ParseStream(Imm(1, Bytes(8, 0xab)), 0).error);
}

TEST(RxErrors, AtomicLengthsMustBeExact) {
    for (size_t len : {0, 12, 51, 53, 60}) ExpectTerm(AtomicReq(1, len), kMalformedRdmap);
    for (size_t len : {0, 11, 13, 52})
        ExpectTerm(Fpdu(Cat({Untagged(true, SIWX_OP_ATOMIC_RESP, 3, 1, 0), Bytes(len, 0)})),
                   kMalformedRdmap);
    for (size_t len : {0, 27, 29})
        ExpectTerm(Fpdu(Cat({Untagged(true, SIWX_OP_READ_REQ, 1, 1, 0), Bytes(len, 0)})),
                   kMalformedRdmap);
}

TEST(RxErrors, HeaderOnlyMessagesAreSingleSegments) {
    ExpectTerm(Fpdu(Cat({Untagged(false, SIWX_OP_ATOMIC_REQ, 1, 1, 0), Bytes(52, 0)})),
               kMalformedRdmap);
    ExpectTerm(Fpdu(Cat({Untagged(false, SIWX_OP_IMM, 0, 1, 0), Bytes(8, 0)})), kMalformedRdmap);
}

TEST(RxErrors, ReservedAopcodes) {
    for (uint8_t aop : {1, 3, 4, 15}) ExpectTerm(AtomicReq(1, 52, aop), kUnexpectedOpcode);
}

TEST(RxErrors, MsnOutOfSequence) {
    ExpectTerm(Send(2, {1}), kMsnRange);
    ExpectTerm(Cat({Send(1, {1}), Send(1, {1})}), kMsnRange, 1);
    ExpectTerm(AtomicReq(0, 52), kMsnRange);
}

TEST(RxErrors, MoOutOfSequence) {
    ExpectTerm(Send(1, {1}, true, 4), kInvalidMo);
    ExpectTerm(Cat({Send(1, {1, 2}, false, 0), Send(1, {3}, true, 1)}), kInvalidMo, 1);
}

TEST(RxErrors, MalformedTerminateHeader) {
    // D set but no room for the echoed header.
    ExpectTerm(Fpdu(Cat({Untagged(true, SIWX_OP_TERMINATE, 2, 1, 0), Bytes{0x00, 0x00, 0x40, 0},
                         Be16(0)})),
               kMalformedRdmap);
}

TEST(RxErrors, ParserStaysDeadAfterError) {
    siwx_rx rx;
    siwx_rx_init(&rx, true);
    Bytes bad = Send(5, {1});
    siwx_rx_event ev;
    size_t used = 0;
    do {
        used += siwx_rx_feed(&rx, bad.data() + used, bad.size() - used, &ev);
    } while (ev.type != SIWX_RX_ERROR && used < bad.size());
    ASSERT_EQ(ev.type, SIWX_RX_ERROR);
    Bytes good = Send(1, {1});
    EXPECT_EQ(siwx_rx_feed(&rx, good.data(), good.size(), &ev), 0u);
    EXPECT_EQ(ev.type, SIWX_RX_ERROR);
}

TEST(RxErrors, RandomCorruptionNeverPassesCrc) {
    std::mt19937 rng(44);
    Bytes good = Cat({Send(1, Bytes(100, 7)), AtomicReq(1, 52), Imm(2, Bytes(8, 1))});
    for (int i = 0; i < 2000; ++i) {
        Bytes bad = good;
        size_t pos = rng() % bad.size();
        bad[pos] ^= uint8_t(1 + rng() % 255);
        RxRecord rec = ParseStream(bad, 1 + rng() % 17);
        // Either refused with a cause, or (a cut length) left incomplete;
        // never three intact segments.
        EXPECT_LT(rec.segment_ends, 3) << pos;
    }
}

}  // namespace
