// TX segmentation: every FPDU fits MULPDU, TO/MO advance, L only on the
// last segment, and what TX writes RX reads back unchanged.
#include <gtest/gtest.h>

#include <random>

#include "wire_builder.h"

using namespace siwx_test;

namespace {

TEST(TxSegment, TaggedWriteAdvancesTo) {
    Bytes payload(5000, 0x42);
    siwx_ddp_hdr h{};
    h.opcode = SIWX_OP_WRITE;
    h.tagged = true;
    h.stag = 9;
    h.to = 0x1000;
    siwx_tx_msg m;
    siwx_tx_msg_init(&m, &h, nullptr, 0, uint32_t(payload.size()));
    siwx_tx_seg s;
    std::vector<siwx_tx_seg> segs;
    while (siwx_tx_next(&m, 1454, &s)) segs.push_back(s);
    ASSERT_EQ(segs.size(), 4u);  // 1440 payload octets per 1454-octet ULPDU
    for (size_t i = 0; i < segs.size(); ++i) {
        EXPECT_EQ(segs[i].payload_off, 1440 * i);
        EXPECT_EQ(segs[i].last, i == segs.size() - 1);
        EXPECT_LE(segs[i].ulpdu_len, 1454u);
        uint64_t to = siwx_get_be64(segs[i].hdr + 2 + 6);
        EXPECT_EQ(to, 0x1000 + 1440 * i);
        EXPECT_EQ(bool(segs[i].hdr[2] & SIWX_DDP_L_FLAG), segs[i].last);
    }
    EXPECT_EQ(segs.back().payload_len, 5000u - 3 * 1440);
}

TEST(TxSegment, RefusesPathTooSmallForHeaders) {
    siwx_ddp_hdr h{};
    h.opcode = SIWX_OP_SEND;
    h.msn = 1;
    siwx_tx_msg m;
    siwx_tx_msg_init(&m, &h, nullptr, 0, 10);
    siwx_tx_seg s;
    EXPECT_FALSE(siwx_tx_next(&m, 18, &s));
    EXPECT_TRUE(siwx_tx_next(&m, 19, &s));
    EXPECT_EQ(s.payload_len, 1u);
}

// Random messages, random path sizes, random chunking: RX sees exactly what
// TX framed, and untagged MSN/MO bookkeeping agrees on both sides.
TEST(TxRxRoundTrip, RandomMessages) {
    std::mt19937 rng(5041);
    for (int round = 0; round < 50; ++round) {
        uint32_t mulpdu = 40 + rng() % 3000;
        uint32_t msn = 1;
        Bytes stream;
        std::vector<Bytes> messages;
        std::vector<bool> tagged;
        for (int i = 0; i < 8; ++i) {
            Bytes payload(rng() % 7000);
            for (auto& o : payload) o = uint8_t(rng());
            siwx_ddp_hdr h{};
            bool t = rng() % 2;
            h.tagged = t;
            h.opcode = t ? SIWX_OP_WRITE : SIWX_OP_SEND;
            if (t) {
                h.stag = rng();
                h.to = rng();
            } else {
                h.msn = msn++;
            }
            siwx_tx_msg m;
            siwx_tx_msg_init(&m, &h, nullptr, 0, uint32_t(payload.size()));
            siwx_tx_seg s;
            while (siwx_tx_next(&m, mulpdu, &s)) {
                Bytes fpdu(siwx_mpa_fpdu_len(s.ulpdu_len));
                siwx_tx_fpdu(&s, payload.data(), true, fpdu.data());
                stream.insert(stream.end(), fpdu.begin(), fpdu.end());
            }
            messages.push_back(payload);
            tagged.push_back(t);
        }
        RxRecord rec = ParseStream(stream, 1 + rng() % 2000);
        ASSERT_FALSE(rec.error) << rec.term << " round " << round;
        // Reassemble per message from the L flags.
        std::vector<Bytes> got;
        Bytes cur;
        for (size_t i = 0; i < rec.segments.size(); ++i) {
            cur.insert(cur.end(), rec.payloads[i].begin(), rec.payloads[i].end());
            if (rec.segments[i].ddp.last) {
                got.push_back(cur);
                cur.clear();
            }
        }
        ASSERT_EQ(got, messages) << "round " << round;
        EXPECT_EQ(rec.segment_ends, int(rec.segments.size()));
    }
}

}  // namespace
