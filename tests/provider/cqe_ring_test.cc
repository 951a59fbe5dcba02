// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// CQE -> ibv_wc translation and the VALID-flag ring protocol, on plain
// memory standing in for the kernel-shared rings.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <string.h>

#include <thread>
#include <vector>

#include "cqe.h"
#include "ring.h"

namespace {

siwx_cqe make_cqe(uint8_t opcode, uint8_t status, uint16_t flags) {
    siwx_cqe c{};
    c.id = 0xabcdef;
    c.opcode = opcode;
    c.status = status;
    c.flags = flags | SIWX_CQE_VALID;
    c.bytes = 4096;
    c.qp_num = 17;
    c.inval_stag = 0x1234;
    const uint8_t imm[8] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4};
    memcpy(c.imm, imm, 8);
    return c;
}

TEST(CqeToWc, PlainSendCompletion) {
    siwx_cqe c = make_cqe(SIWX_WC_SEND, SIWX_WC_SUCCESS, 0);
    ibv_wc wc;
    memset(&wc, 0x5a, sizeof(wc));
    siwx_cqe_to_wc(&c, &wc);
    EXPECT_EQ(0xabcdefu, wc.wr_id);
    EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
    EXPECT_EQ(IBV_WC_SEND, wc.opcode);
    EXPECT_EQ(4096u, wc.byte_len);
    EXPECT_EQ(17u, wc.qp_num);
    EXPECT_EQ(0u, wc.wc_flags);
    EXPECT_EQ(0u, wc.imm_data);
    EXPECT_EQ(0u, wc.vendor_err);
    EXPECT_EQ(0u, wc.src_qp);
}

TEST(CqeToWc, WriteWithImmReportsFirstFourOctetsAsStored) {
    siwx_cqe c = make_cqe(SIWX_WC_RECV_RDMA_WITH_IMM, SIWX_WC_SUCCESS, SIWX_CQE_WITH_IMM);
    ibv_wc wc;
    siwx_cqe_to_wc(&c, &wc);
    EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
    EXPECT_EQ(IBV_WC_WITH_IMM, wc.wc_flags);
    // network order as verbs defines imm_data: ntohl gives the wire value
    EXPECT_EQ(0xdeadbeefu, ntohl(wc.imm_data));

    uint8_t imm[8];
    siwx_cqe_imm8(&c, imm);
    const uint8_t want[8] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4};
    EXPECT_EQ(0, memcmp(want, imm, 8));
}

TEST(CqeToWc, SendWithInvalidateReportsStag) {
    siwx_cqe c = make_cqe(SIWX_WC_RECV, SIWX_WC_SUCCESS, SIWX_CQE_WITH_INV);
    ibv_wc wc;
    siwx_cqe_to_wc(&c, &wc);
    EXPECT_EQ(IBV_WC_RECV, wc.opcode);
    EXPECT_EQ(IBV_WC_WITH_INV, wc.wc_flags);
    EXPECT_EQ(0x1234u, wc.invalidated_rkey);
    uint8_t imm[8];
    siwx_cqe_imm8(&c, imm);
    const uint8_t zero[8] = {};
    EXPECT_EQ(0, memcmp(zero, imm, 8));
}

TEST(CqeToWc, OpcodesAndStatusesPassThrough) {
    const uint8_t ops[] = {SIWX_WC_SEND,      SIWX_WC_RDMA_WRITE,        SIWX_WC_RDMA_READ,
                           SIWX_WC_COMP_SWAP, SIWX_WC_FETCH_ADD,         SIWX_WC_LOCAL_INV,
                           SIWX_WC_RECV,      SIWX_WC_RECV_RDMA_WITH_IMM};
    const ibv_wc_opcode wops[] = {IBV_WC_SEND,      IBV_WC_RDMA_WRITE,        IBV_WC_RDMA_READ,
                                  IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD,         IBV_WC_LOCAL_INV,
                                  IBV_WC_RECV,      IBV_WC_RECV_RDMA_WITH_IMM};
    for (size_t i = 0; i < sizeof(ops); i++) {
        siwx_cqe c = make_cqe(ops[i], SIWX_WC_WR_FLUSH_ERR, 0);
        ibv_wc wc;
        siwx_cqe_to_wc(&c, &wc);
        EXPECT_EQ(wops[i], wc.opcode);
        EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
    }
    siwx_cqe c = make_cqe(SIWX_WC_RDMA_READ, SIWX_WC_REM_ACCESS_ERR, 0);
    ibv_wc wc;
    siwx_cqe_to_wc(&c, &wc);
    EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
}

TEST(Ring, ProducerFillsUntilFullThenWaitsForConsumer) {
    std::vector<siwx_sqe> mem(4);
    memset(mem.data(), 0, mem.size() * sizeof(siwx_sqe));
    siwx_ring prod, cons;
    siwx_ring_init(&prod, mem.data(), 4, sizeof(siwx_sqe));
    siwx_ring_init(&cons, mem.data(), 4, sizeof(siwx_sqe));

    EXPECT_EQ(nullptr, siwx_ring_peek(&cons)) << "empty ring";
    for (uint64_t i = 0; i < 4; i++) {
        auto* e = static_cast<siwx_sqe*>(siwx_ring_claim(&prod));
        ASSERT_NE(nullptr, e) << i;
        e->id = i;
        siwx_elem_publish(e, SIWX_WQE_SIGNALLED);
        prod.pos = siwx_ring_next(&prod, prod.pos);
    }
    EXPECT_EQ(0u, prod.pos) << "wrapped";
    EXPECT_EQ(nullptr, siwx_ring_claim(&prod)) << "full";

    auto* e = static_cast<siwx_sqe*>(siwx_ring_peek(&cons));
    ASSERT_NE(nullptr, e);
    EXPECT_EQ(0u, e->id);
    EXPECT_EQ(SIWX_WQE_VALID | SIWX_WQE_SIGNALLED, e->flags);
    siwx_ring_consume(&cons);
    EXPECT_EQ(0, mem[0].flags) << "consumer hands the slot back";

    ASSERT_NE(nullptr, siwx_ring_claim(&prod)) << "slot 0 free again";
    e = static_cast<siwx_sqe*>(siwx_ring_peek(&cons));
    ASSERT_NE(nullptr, e);
    EXPECT_EQ(1u, e->id) << "consumer continues in order";
}

TEST(Ring, CqeRingConsumesInOrderAcrossWrap) {
    std::vector<siwx_cqe> mem(2);
    memset(mem.data(), 0, mem.size() * sizeof(siwx_cqe));
    siwx_ring kern, prov;
    siwx_ring_init(&kern, mem.data(), 2, sizeof(siwx_cqe));
    siwx_ring_init(&prov, mem.data(), 2, sizeof(siwx_cqe));
    for (uint64_t i = 0; i < 5; i++) {
        auto* c = static_cast<siwx_cqe*>(siwx_ring_claim(&kern));
        ASSERT_NE(nullptr, c);
        c->id = i;
        siwx_elem_publish(c, 0);
        kern.pos = siwx_ring_next(&kern, kern.pos);
        c = static_cast<siwx_cqe*>(siwx_ring_peek(&prov));
        ASSERT_NE(nullptr, c);
        EXPECT_EQ(i, c->id);
        siwx_ring_consume(&prov);
        EXPECT_EQ(nullptr, siwx_ring_peek(&prov));
    }
}

// Two threads, a tiny ring, many elements: every element arrives once, in
// order, with the contents written before VALID (release/acquire).
TEST(Ring, ConcurrentProducerConsumer) {
    constexpr uint64_t kCount = 200000;
    std::vector<siwx_cqe> mem(8);
    memset(mem.data(), 0, mem.size() * sizeof(siwx_cqe));
    siwx_ring prod, cons;
    siwx_ring_init(&prod, mem.data(), 8, sizeof(siwx_cqe));
    siwx_ring_init(&cons, mem.data(), 8, sizeof(siwx_cqe));

    std::thread t([&] {
        for (uint64_t i = 0; i < kCount; i++) {
            siwx_cqe* c;
            while (!(c = static_cast<siwx_cqe*>(siwx_ring_claim(&prod)))) std::this_thread::yield();
            c->id = i;
            c->bytes = (uint32_t)(i * 3);
            siwx_elem_publish(c, 0);
            prod.pos = siwx_ring_next(&prod, prod.pos);
        }
    });
    uint64_t bad = 0;
    for (uint64_t i = 0; i < kCount; i++) {
        siwx_cqe* c;
        while (!(c = static_cast<siwx_cqe*>(siwx_ring_peek(&cons)))) std::this_thread::yield();
        if (c->id != i || c->bytes != (uint32_t)(i * 3)) bad++;
        siwx_ring_consume(&cons);
    }
    t.join();
    EXPECT_EQ(0u, bad);
}

TEST(Ring, DoorbellOnlyWhenTxIdle) {
    siwx_sq_ctrl ctrl{};
    EXPECT_TRUE(siwx_sq_doorbell_needed(&ctrl));
    ctrl.tx_active = 1;
    EXPECT_FALSE(siwx_sq_doorbell_needed(&ctrl));
}

}  // namespace
