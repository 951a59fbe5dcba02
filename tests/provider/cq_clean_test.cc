// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// ibv_destroy_qp's cleaning of a CQ ring (providers/siwx/cq_clean.c), on
// plain memory standing in for the kernel-shared ring.
#include "cq_clean.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace {

constexpr uint32_t kDead = 7;
constexpr uint32_t kOther = 9;

// A ring of num CQEs whose consumer starts at pos.
class CqRing {
  public:
    CqRing(uint32_t num, uint32_t pos) : slots_(num) {
        siwx_ring_init(&ring_, slots_.data(), num, sizeof(siwx_cqe));
        ring_.pos = pos;
        produce_ = pos;
    }

    // The kernel's side: publish a CQE of qp with id and opcode.
    void publish(uint32_t qp, uint64_t id, uint8_t opcode = SIWX_WC_SEND) {
        auto* c = static_cast<siwx_cqe*>(siwx_ring_at(&ring_, produce_));
        ASSERT_TRUE(siwx_elem_free(c)) << "ring full";
        c->id = id;
        c->qp_num = qp;
        c->opcode = opcode;
        siwx_elem_publish(c, 0);
        produce_ = siwx_ring_next(&ring_, produce_);
    }

    // The poller's side: every published CQE as (qp, id), consumed.
    std::vector<std::pair<uint32_t, uint64_t>> drain() {
        std::vector<std::pair<uint32_t, uint64_t>> out;
        while (auto* c = static_cast<siwx_cqe*>(siwx_ring_peek(&ring_))) {
            out.emplace_back(c->qp_num, c->id);
            siwx_ring_consume(&ring_);
        }
        return out;
    }

    uint32_t clean(uint32_t qp, bool keep_recv = false) {
        return siwx_cq_clean(&ring_, qp, keep_recv);
    }

    siwx_ring ring_{};

  private:
    std::vector<siwx_cqe> slots_;
    uint32_t produce_ = 0;
};

using Got = std::vector<std::pair<uint32_t, uint64_t>>;

TEST(CqClean, TakesTheQpsCompletionsAndKeepsTheOthersInOrder) {
    CqRing r(16, 0);
    r.publish(kDead, 1);
    r.publish(kOther, 2);
    r.publish(kDead, 3);
    r.publish(kDead, 4);
    r.publish(kOther, 5);
    r.publish(kDead, 6);
    EXPECT_EQ(4u, r.clean(kDead));
    EXPECT_EQ((Got{{kOther, 2}, {kOther, 5}}), r.drain());
}

TEST(CqClean, FreedSlotsGoBackToTheProducer) {
    CqRing r(4, 0);
    r.publish(kDead, 1);
    r.publish(kOther, 2);
    r.publish(kDead, 3);
    r.publish(kOther, 4);  // full
    EXPECT_EQ(2u, r.clean(kDead));
    // Two slots free again, after the two kept completions
    r.publish(kOther, 5);
    r.publish(kOther, 6);
    EXPECT_EQ((Got{{kOther, 2}, {kOther, 4}, {kOther, 5}, {kOther, 6}}), r.drain());
}

TEST(CqClean, WrapsAroundTheRingsEnd) {
    CqRing r(8, 6);
    r.publish(kOther, 1);  // slot 6
    r.publish(kDead, 2);   // 7
    r.publish(kOther, 3);  // 0
    r.publish(kDead, 4);   // 1
    r.publish(kOther, 5);  // 2
    EXPECT_EQ(2u, r.clean(kDead));
    EXPECT_EQ((Got{{kOther, 1}, {kOther, 3}, {kOther, 5}}), r.drain());
}

TEST(CqClean, AFullRingOfTheQpEmpties) {
    CqRing r(4, 3);
    for (uint64_t id = 1; id <= 4; id++) r.publish(kDead, id);
    EXPECT_EQ(4u, r.clean(kDead));
    EXPECT_TRUE(r.drain().empty());
    r.publish(kOther, 9);
    EXPECT_EQ((Got{{kOther, 9}}), r.drain());
}

TEST(CqClean, KeepsReceivesOfAQpOnAnSrq) {
    CqRing r(8, 0);
    r.publish(kDead, 1, SIWX_WC_RECV);
    r.publish(kDead, 2, SIWX_WC_SEND);
    r.publish(kDead, 3, SIWX_WC_RECV_RDMA_WITH_IMM);
    r.publish(kDead, 4, SIWX_WC_RDMA_READ);
    EXPECT_EQ(2u, r.clean(kDead, true));
    EXPECT_EQ((Got{{kDead, 1}, {kDead, 3}}), r.drain());
}

TEST(CqClean, NothingToTakeChangesNothing) {
    CqRing r(8, 2);
    EXPECT_EQ(0u, r.clean(kDead));  // empty
    r.publish(kOther, 1);
    r.publish(kOther, 2);
    EXPECT_EQ(0u, r.clean(kDead));
    EXPECT_EQ(2u, r.ring_.pos);
    EXPECT_EQ((Got{{kOther, 1}, {kOther, 2}}), r.drain());
}

}  // namespace
