// Data-sink bookkeeping: scatter-list positions and the byte_len of an
// Immediate Data completion.
#include <gtest/gtest.h>

#include "wire_builder.h"

using namespace siwx_test;

namespace {

TEST(SglSeek, FindsElementAndOffset) {
    const uint32_t lens[] = {100, 0, 50, 200};
    siwx_sgl_pos pos;
    siwx_term err;
    ASSERT_TRUE(siwx_sgl_seek(lens, 4, 0, 10, &pos, &err));
    EXPECT_EQ(pos.idx, 0u);
    EXPECT_EQ(pos.off, 0u);
    ASSERT_TRUE(siwx_sgl_seek(lens, 4, 100, 10, &pos, &err));
    EXPECT_EQ(pos.idx, 2u);  // the empty element is skipped
    EXPECT_EQ(pos.off, 0u);
    ASSERT_TRUE(siwx_sgl_seek(lens, 4, 170, 180, &pos, &err));
    EXPECT_EQ(pos.idx, 3u);
    EXPECT_EQ(pos.off, 20u);
    ASSERT_TRUE(siwx_sgl_seek(lens, 4, 350, 0, &pos, &err));  // zero octets at the end
    EXPECT_EQ(pos.idx, 4u);
}

TEST(SglSeek, TooLongIsDdpMessageTooLong) {
    const uint32_t lens[] = {100, 50};
    siwx_sgl_pos pos;
    siwx_term err{};
    EXPECT_FALSE(siwx_sgl_seek(lens, 2, 100, 51, &pos, &err));
    EXPECT_EQ(err, siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_TOO_LONG));
    EXPECT_FALSE(siwx_sgl_seek(lens, 0, 0, 1, &pos, &err));
    EXPECT_TRUE(siwx_sgl_seek(lens, 0, 0, 0, &pos, &err));  // a zero-length Send fits anywhere
    const uint32_t huge[] = {0xffffffffu};
    EXPECT_FALSE(siwx_sgl_seek(huge, 1, 0xfffffff0u, 0x20, &pos, &err));  // no 32-bit wrap
}

TEST(ImmLen, WriteThenImmediateReportsWriteLength) {
    siwx_imm_len t{};
    siwx_imm_len_track(&t, SIWX_OP_WRITE, 4096);
    EXPECT_EQ(siwx_imm_len_take(&t), 4096u);
    EXPECT_EQ(siwx_imm_len_take(&t), 0u);  // a second immediate has no Write
}

TEST(ImmLen, ResponsesDoNotSeparateWriteAndImmediate) {
    siwx_imm_len t{};
    siwx_imm_len_track(&t, SIWX_OP_WRITE, 0);
    siwx_imm_len_track(&t, SIWX_OP_READ_RESP, 100);
    siwx_imm_len_track(&t, SIWX_OP_ATOMIC_RESP, 12);
    EXPECT_EQ(siwx_imm_len_take(&t), 0u);
    siwx_imm_len_track(&t, SIWX_OP_WRITE, 77);
    siwx_imm_len_track(&t, SIWX_OP_READ_RESP, 100);
    EXPECT_EQ(siwx_imm_len_take(&t), 77u);
}

TEST(ImmLen, OtherRequesterMessagesBreakTheLink) {
    for (uint8_t op : {SIWX_OP_SEND, SIWX_OP_SEND_SE, SIWX_OP_READ_REQ, SIWX_OP_ATOMIC_REQ,
                       SIWX_OP_IMM, SIWX_OP_SEND_INVAL}) {
        siwx_imm_len t{};
        siwx_imm_len_track(&t, SIWX_OP_WRITE, 5);
        siwx_imm_len_track(&t, op, 0);
        EXPECT_EQ(siwx_imm_len_take(&t), 0u) << int(op);
    }
}

}  // namespace
