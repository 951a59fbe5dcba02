// The outstanding Read/Atomic request queues: IRD/ORD limits, request-order
// matching of responses, and the Terminate for each mismatch.
#include <gtest/gtest.h>

#include "wire_builder.h"

using namespace siwx_test;

namespace {

const siwx_term kNoBuffer = {SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_NO_BUFFER};
const siwx_term kInvalidStag = {SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, SIWX_DDP_T_INVALID_STAG};
const siwx_term kBounds = {SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, SIWX_DDP_T_BASE_BOUNDS};

siwx_ddp_hdr Req(uint8_t op, uint32_t msn) { return UntaggedHdr(op, SIWX_QN_READ, msn, 0, true); }

siwx_ddp_hdr Resp(uint32_t stag, uint64_t to, bool last) {
    return TaggedHdr(SIWX_OP_READ_RESP, stag, to, last);
}

TEST(Rdq, ResponderRefusesBeyondIrd) {
    siwx_rdq irq;
    siwx_rdq_init(&irq, 2);
    siwx_read_req rr{1, 0, 8, 2, 0};
    siwx_atomic_req ar;
    siwx_atomic_req_fetch_add(&ar, 1, 2, 0, 1, 0);
    siwx_term err{};
    siwx_ddp_hdr read = Req(SIWX_OP_READ_REQ, 1);
    EXPECT_TRUE(siwx_rdq_accept_request(&irq, &read, &rr, nullptr, &err));
    siwx_ddp_hdr atomic = Req(SIWX_OP_ATOMIC_REQ, 2);
    EXPECT_TRUE(siwx_rdq_accept_request(&irq, &atomic, nullptr, &ar, &err));
    siwx_ddp_hdr third = Req(SIWX_OP_READ_REQ, 3);
    EXPECT_FALSE(siwx_rdq_accept_request(&irq, &third, &rr, nullptr, &err));
    EXPECT_EQ(err, kNoBuffer);
    // Responses leave in request order: the read first, then the atomic.
    ASSERT_EQ(siwx_rdq_head(&irq)->kind, SIWX_RDQ_READ);
    siwx_rdq_pop(&irq);
    ASSERT_EQ(siwx_rdq_head(&irq)->kind, SIWX_RDQ_ATOMIC);
    EXPECT_EQ(siwx_rdq_head(&irq)->u.atomic.req_id, 1u);
    siwx_rdq_pop(&irq);
    EXPECT_EQ(siwx_rdq_head(&irq), nullptr);
}

TEST(Rdq, RequesterMatchesReadResponseSegments) {
    siwx_rdq orq;
    siwx_rdq_init(&orq, 4);
    siwx_rdq_entry* e = siwx_rdq_push(&orq, SIWX_RDQ_READ, 77);
    ASSERT_NE(e, nullptr);
    e->u.read = siwx_read_req{0x10, 0x1000, 3000, 0x20, 0};
    bool complete = false;
    siwx_term err{};
    siwx_ddp_hdr s1 = Resp(0x10, 0x1000, false);
    EXPECT_EQ(siwx_rdq_read_response(&orq, &s1, 1440, &complete, &err), e);
    EXPECT_FALSE(complete);
    siwx_ddp_hdr s2 = Resp(0x10, 0x1000 + 1440, true);
    EXPECT_EQ(siwx_rdq_read_response(&orq, &s2, 1560, &complete, &err), e);
    EXPECT_TRUE(complete);
    EXPECT_EQ(e->cookie, 77u);
}

TEST(Rdq, RequesterRefusesStrayReadResponses) {
    siwx_rdq orq;
    siwx_rdq_init(&orq, 4);
    bool complete;
    siwx_term err{};
    siwx_ddp_hdr s = Resp(0x10, 0x1000, true);
    EXPECT_EQ(siwx_rdq_read_response(&orq, &s, 8, &complete, &err), nullptr);
    EXPECT_EQ(err, kInvalidStag);  // nothing outstanding

    siwx_rdq_entry* e = siwx_rdq_push(&orq, SIWX_RDQ_READ, 1);
    e->u.read = siwx_read_req{0x10, 0x1000, 100, 0x20, 0};
    siwx_ddp_hdr wrong_stag = Resp(0x11, 0x1000, true);
    EXPECT_EQ(siwx_rdq_read_response(&orq, &wrong_stag, 100, &complete, &err), nullptr);
    EXPECT_EQ(err, kInvalidStag);
    siwx_ddp_hdr wrong_to = Resp(0x10, 0x1004, true);
    EXPECT_EQ(siwx_rdq_read_response(&orq, &wrong_to, 96, &complete, &err), nullptr);
    EXPECT_EQ(err, kBounds);
    siwx_ddp_hdr too_long = Resp(0x10, 0x1000, true);
    EXPECT_EQ(siwx_rdq_read_response(&orq, &too_long, 101, &complete, &err), nullptr);
    EXPECT_EQ(err, kBounds);
    siwx_ddp_hdr short_last = Resp(0x10, 0x1000, true);
    EXPECT_EQ(siwx_rdq_read_response(&orq, &short_last, 99, &complete, &err), nullptr);
    EXPECT_EQ(err, kBounds);
}

TEST(Rdq, AtomicResponsesMatchInOrder) {
    siwx_rdq orq;
    siwx_rdq_init(&orq, 4);
    siwx_rdq_entry* rd = siwx_rdq_push(&orq, SIWX_RDQ_READ, 1);
    rd->u.read = siwx_read_req{0x10, 0, 8, 0x20, 0};
    siwx_rdq_entry* at = siwx_rdq_push(&orq, SIWX_RDQ_ATOMIC, 2);
    siwx_atomic_req_fetch_add(&at->u.atomic, 5, 0x30, 0, 1, 0);
    siwx_atomic_resp resp{5, 40};
    siwx_term err{};
    // The read is older: an atomic response may not overtake it.
    EXPECT_EQ(siwx_rdq_atomic_response(&orq, &resp, &err), nullptr);
    EXPECT_EQ(err, kNoBuffer);
    siwx_rdq_pop(&orq);
    siwx_atomic_resp wrong_id{6, 40};
    EXPECT_EQ(siwx_rdq_atomic_response(&orq, &wrong_id, &err), nullptr);
    EXPECT_EQ(siwx_rdq_atomic_response(&orq, &resp, &err), at);
}

TEST(Rdq, OrdLimitsPushesAndWraps) {
    siwx_rdq q;
    siwx_rdq_init(&q, 1000);
    EXPECT_EQ(q.limit, uint32_t(SIWX_RDQ_MAX));
    siwx_rdq_init(&q, 0);
    EXPECT_EQ(q.limit, 1u);
    siwx_rdq_init(&q, 3);
    for (uint64_t i = 0; i < 1000; ++i) {
        ASSERT_NE(siwx_rdq_push(&q, SIWX_RDQ_READ, i), nullptr);
        if (i % 3 == 2) {
            EXPECT_TRUE(siwx_rdq_full(&q));
            EXPECT_EQ(siwx_rdq_push(&q, SIWX_RDQ_READ, 0), nullptr);
            for (uint64_t k = i - 2; k <= i; ++k) {
                EXPECT_EQ(siwx_rdq_head(&q)->cookie, k);
                siwx_rdq_pop(&q);
            }
        }
    }
}

}  // namespace
