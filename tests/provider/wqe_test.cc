// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// The provider's SQE/RQE builder: every opcode, the RFC 7306 atomic and
// immediate mappings of abi.h, and the post-time refusals.
#include "wqe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gtest/gtest.h>
#include <string.h>

namespace {

const siwx_sq_limits kLim = {SIWX_MAX_SGE, SIWX_MAX_INLINE};

struct Wr {
    ibv_send_wr wr{};
    ibv_sge sge[SIWX_MAX_SGE + 1]{};

    explicit Wr(ibv_wr_opcode op, int nsge = 1, uint32_t len = 8) {
        wr.wr_id = 0x1122334455667788ULL;
        wr.opcode = op;
        wr.sg_list = sge;
        wr.num_sge = nsge;
        for (int i = 0; i < nsge; i++) sge[i] = {0x1000u + 0x100u * i, len, 0x77u + i};
    }
};

int build(siwx_sqe* sqe, const Wr& w, bool sig_all = false, const siwx_sq_limits& lim = kLim) {
    return siwx_sqe_from_send_wr(sqe, &w.wr, sig_all, &lim);
}

TEST(SqeBuild, SendCopiesSglAndIdAndFlags) {
    Wr w(IBV_WR_SEND, 3, 100);
    w.wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_FENCE;
    siwx_sqe sqe;
    ASSERT_EQ(0, build(&sqe, w));
    EXPECT_EQ(IB_UVERBS_WR_SEND, sqe.opcode);
    EXPECT_EQ(w.wr.wr_id, sqe.id);
    EXPECT_EQ(3, sqe.num_sge);
    EXPECT_EQ(SIWX_WQE_SIGNALLED | SIWX_WQE_SOLICITED | SIWX_WQE_FENCE, sqe.flags);
    EXPECT_FALSE(sqe.flags & SIWX_WQE_VALID) << "published only by the ring";
    for (int i = 0; i < 3; i++) {
        EXPECT_EQ(w.sge[i].addr, sqe.sge[i].addr);
        EXPECT_EQ(w.sge[i].length, sqe.sge[i].length);
        EXPECT_EQ(w.sge[i].lkey, sqe.sge[i].lkey);
    }
    EXPECT_EQ(300u, siwx_sqe_length(&sqe));
}

TEST(SqeBuild, SigAllSignalsEveryWr) {
    Wr w(IBV_WR_SEND);
    siwx_sqe sqe;
    ASSERT_EQ(0, build(&sqe, w, true));
    EXPECT_EQ(SIWX_WQE_SIGNALLED, sqe.flags);
    ASSERT_EQ(0, build(&sqe, w, false));
    EXPECT_EQ(0, sqe.flags);
}

TEST(SqeBuild, SendWithInvalidateCarriesStag) {
    Wr w(IBV_WR_SEND_WITH_INV);
    w.wr.invalidate_rkey = 0xabcdef01;
    siwx_sqe sqe;
    ASSERT_EQ(0, build(&sqe, w));
    EXPECT_EQ(IB_UVERBS_WR_SEND_WITH_INV, sqe.opcode);
    EXPECT_EQ(0xabcdef01u, sqe.rkey);
}

TEST(SqeBuild, RdmaWriteAndRead) {
    for (auto op : {IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ}) {
        Wr w(op, 2, 64);
        w.wr.wr.rdma.remote_addr = 0xfeedbeef0001ULL;
        w.wr.wr.rdma.rkey = 0x42;
        siwx_sqe sqe;
        ASSERT_EQ(0, build(&sqe, w));
        EXPECT_EQ(op == IBV_WR_RDMA_WRITE ? IB_UVERBS_WR_RDMA_WRITE : IB_UVERBS_WR_RDMA_READ,
                  sqe.opcode);
        EXPECT_EQ(0xfeedbeef0001ULL, sqe.raddr);
        EXPECT_EQ(0x42u, sqe.rkey);
        EXPECT_EQ(2, sqe.num_sge);
    }
}

TEST(SqeBuild, WriteWithImmPutsVerbsImmFirstAndZerosRest) {
    Wr w(IBV_WR_RDMA_WRITE_WITH_IMM, 1, 4096);
    w.wr.imm_data = htonl(0xa1b2c3d4);
    w.wr.wr.rdma.remote_addr = 0x5000;
    w.wr.wr.rdma.rkey = 9;
    siwx_sqe sqe;
    ASSERT_EQ(0, build(&sqe, w));
    EXPECT_EQ(IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, sqe.opcode);
    const uint8_t want[8] = {0xa1, 0xb2, 0xc3, 0xd4, 0, 0, 0, 0};
    EXPECT_EQ(0, memcmp(want, sqe.imm, 8));
    EXPECT_FALSE(sqe.flags & SIWX_WQE_IMM_FULL);
}

TEST(SqeBuild, WriteImm8CarriesAllOctets) {
    siwx_sqe sqe;
    const uint8_t imm[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ASSERT_EQ(0, siwx_sqe_begin(&sqe, 7, 0, false));
    siwx_sqe_op_write_imm8(&sqe, 3, 0x100, imm);
    EXPECT_EQ(IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, sqe.opcode);
    EXPECT_EQ(0, memcmp(imm, sqe.imm, 8));
    EXPECT_TRUE(sqe.flags & SIWX_WQE_IMM_FULL);
    EXPECT_EQ(0, siwx_sqe_check(&sqe));
}

TEST(SqeBuild, ZeroLengthSendWithImmIsAccepted) {
    siwx_sqe sqe;
    Wr none(IBV_WR_SEND_WITH_IMM, 0);
    none.wr.imm_data = htonl(0x01020304);
    ASSERT_EQ(0, build(&sqe, none));
    EXPECT_EQ(IB_UVERBS_WR_SEND_WITH_IMM, sqe.opcode);
    const uint8_t want[8] = {1, 2, 3, 4, 0, 0, 0, 0};
    EXPECT_EQ(0, memcmp(want, sqe.imm, 8));

    Wr empty_sge(IBV_WR_SEND_WITH_IMM, 1, 0);
    EXPECT_EQ(0, build(&sqe, empty_sge));
}

TEST(SqeBuild, SendWithImmWithPayloadIsRefused) {
    siwx_sqe sqe;
    char byte = 'x';
    Wr w(IBV_WR_SEND_WITH_IMM, 1, 1);
    EXPECT_EQ(EINVAL, build(&sqe, w));
    w.sge[0].addr = (uintptr_t)&byte;
    w.wr.send_flags = IBV_SEND_INLINE;
    EXPECT_EQ(EINVAL, build(&sqe, w));
}

TEST(SqeBuild, FetchAddMapsToRfc7306WithZeroMask) {
    Wr w(IBV_WR_ATOMIC_FETCH_AND_ADD);
    w.wr.wr.atomic.remote_addr = 0x8008;
    w.wr.wr.atomic.rkey = 0x99;
    w.wr.wr.atomic.compare_add = 5;
    w.wr.wr.atomic.swap = 0xdead;  // ignored by FetchAdd
    siwx_sqe sqe;
    ASSERT_EQ(0, build(&sqe, w));
    EXPECT_EQ(IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, sqe.opcode);
    EXPECT_EQ(5u, sqe.add_swap);
    EXPECT_EQ(0u, sqe.add_swap_mask);
    EXPECT_EQ(0u, sqe.compare);
    EXPECT_EQ(0u, sqe.compare_mask);
    EXPECT_EQ(0x8008u, sqe.raddr);
    EXPECT_EQ(0x99u, sqe.rkey);
}

TEST(SqeBuild, CmpSwapMapsToRfc7306WithFullMasks) {
    Wr w(IBV_WR_ATOMIC_CMP_AND_SWP);
    w.wr.wr.atomic.remote_addr = 0x10;
    w.wr.wr.atomic.rkey = 1;
    w.wr.wr.atomic.compare_add = 0x1111;
    w.wr.wr.atomic.swap = 0x2222;
    siwx_sqe sqe;
    ASSERT_EQ(0, build(&sqe, w));
    EXPECT_EQ(IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, sqe.opcode);
    EXPECT_EQ(0x1111u, sqe.compare);
    EXPECT_EQ(~0ULL, sqe.compare_mask);
    EXPECT_EQ(0x2222u, sqe.add_swap);
    EXPECT_EQ(~0ULL, sqe.add_swap_mask);
}

TEST(SqeBuild, MaskedAtomicsUseMaskedOpcodes) {
    siwx_sqe sqe;
    ibv_sge sge = {0x1000, 8, 1};
    ASSERT_EQ(0, siwx_sqe_begin(&sqe, 1, 0, false));
    siwx_sqe_op_masked_fetch_add(&sqe, 2, 0x40, 0x0101, 0x8080);
    ASSERT_EQ(0, siwx_sqe_set_sgl(&sqe, &sge, 1, &kLim));
    EXPECT_EQ(IB_UVERBS_WR_MASKED_ATOMIC_FETCH_AND_ADD, sqe.opcode);
    EXPECT_EQ(0x0101u, sqe.add_swap);
    EXPECT_EQ(0x8080u, sqe.add_swap_mask);
    EXPECT_EQ(0, siwx_sqe_check(&sqe));

    ASSERT_EQ(0, siwx_sqe_begin(&sqe, 1, 0, false));
    siwx_sqe_op_masked_cmp_swp(&sqe, 2, 0x40, 1, 0xf, 2, 0xf0);
    ASSERT_EQ(0, siwx_sqe_set_sgl(&sqe, &sge, 1, &kLim));
    EXPECT_EQ(IB_UVERBS_WR_MASKED_ATOMIC_CMP_AND_SWP, sqe.opcode);
    EXPECT_EQ(1u, sqe.compare);
    EXPECT_EQ(0xfu, sqe.compare_mask);
    EXPECT_EQ(2u, sqe.add_swap);
    EXPECT_EQ(0xf0u, sqe.add_swap_mask);
    EXPECT_EQ(0, siwx_sqe_check(&sqe));
}

TEST(SqeBuild, AtomicsNeedOneEightByteSgeAndAlignedAddress) {
    for (auto op : {IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP}) {
        siwx_sqe sqe;
        Wr ok(op);
        ok.wr.wr.atomic.remote_addr = 0x1000;
        EXPECT_EQ(0, build(&sqe, ok));

        Wr two(op, 2);
        two.wr.wr.atomic.remote_addr = 0x1000;
        EXPECT_EQ(EINVAL, build(&sqe, two));

        Wr none(op, 0);
        none.wr.wr.atomic.remote_addr = 0x1000;
        EXPECT_EQ(EINVAL, build(&sqe, none));

        Wr four(op, 1, 4);
        four.wr.wr.atomic.remote_addr = 0x1000;
        EXPECT_EQ(EINVAL, build(&sqe, four));

        Wr misaligned(op);
        misaligned.wr.wr.atomic.remote_addr = 0x1004;
        EXPECT_EQ(EINVAL, build(&sqe, misaligned));

        Wr inl(op);
        inl.wr.wr.atomic.remote_addr = 0x1000;
        inl.wr.send_flags = IBV_SEND_INLINE;
        EXPECT_EQ(EINVAL, build(&sqe, inl));
    }
}

TEST(SqeBuild, LocalInvalidate) {
    siwx_sqe sqe;
    Wr w(IBV_WR_LOCAL_INV, 0);
    w.wr.invalidate_rkey = 0x5555;
    ASSERT_EQ(0, build(&sqe, w));
    EXPECT_EQ(IB_UVERBS_WR_LOCAL_INV, sqe.opcode);
    EXPECT_EQ(0x5555u, sqe.rkey);
    Wr with_data(IBV_WR_LOCAL_INV, 1);
    EXPECT_EQ(EINVAL, build(&sqe, with_data));
}

TEST(SqeBuild, BindMwCarriesWindowMrAndRights) {
    ibv_mr mr{};
    mr.lkey = 0x4242;
    ibv_mw mw{};
    mw.rkey = 0x1200 | 0x07;
    Wr w(IBV_WR_BIND_MW, 0);
    w.wr.bind_mw.mw = &mw;
    w.wr.bind_mw.rkey = 0x1200 | 0x08;
    w.wr.bind_mw.bind_info = {&mr, 0x10000, 1ULL << 33, IBV_ACCESS_REMOTE_READ};
    siwx_sqe sqe;
    ASSERT_EQ(0, build(&sqe, w));
    EXPECT_EQ(IB_UVERBS_WR_BIND_MW, sqe.opcode);
    EXPECT_EQ(0x1208u, sqe.rkey);
    EXPECT_EQ(0x10000u, sqe.raddr);
    EXPECT_EQ(1ULL << 33, sqe.add_swap) << "window lengths are 64-bit";
    EXPECT_EQ(0x4242u, sqe.compare);
    EXPECT_EQ(static_cast<uint64_t>(IBV_ACCESS_REMOTE_READ), sqe.add_swap_mask);
    EXPECT_EQ(0, sqe.num_sge);

    Wr unbind(IBV_WR_BIND_MW, 0);
    unbind.wr.bind_mw.mw = &mw;
    unbind.wr.bind_mw.rkey = mw.rkey;
    ASSERT_EQ(0, build(&sqe, unbind)) << "zero length, no MR: unbind";
    EXPECT_EQ(0u, sqe.add_swap);
    EXPECT_EQ(0u, sqe.compare);

    Wr other = w;
    other.wr.bind_mw.rkey = 0x1300 | 0x08;
    EXPECT_EQ(EINVAL, build(&sqe, other)) << "the new STag names another window";
    Wr no_mr = w;
    no_mr.wr.bind_mw.bind_info.mr = nullptr;
    EXPECT_EQ(EINVAL, build(&sqe, no_mr));
    Wr no_mw = w;
    no_mw.wr.bind_mw.mw = nullptr;
    EXPECT_EQ(EINVAL, build(&sqe, no_mw));
    Wr with_sge = w;
    with_sge.wr.num_sge = 1;
    EXPECT_EQ(EINVAL, build(&sqe, with_sge));
}

TEST(SqeBuild, UnsupportedOpcodesAndFlagsAreRefused) {
    siwx_sqe sqe;
    for (auto op : {IBV_WR_TSO, IBV_WR_DRIVER1, IBV_WR_ATOMIC_WRITE}) {
        Wr w(op);
        EXPECT_EQ(EINVAL, build(&sqe, w)) << "opcode " << op;
    }
    Wr csum(IBV_WR_SEND);
    csum.wr.send_flags = IBV_SEND_IP_CSUM;
    EXPECT_EQ(EINVAL, build(&sqe, csum));
}

TEST(SqeBuild, SgeLimits) {
    siwx_sqe sqe;
    Wr w(IBV_WR_SEND, SIWX_MAX_SGE + 1);
    EXPECT_EQ(EINVAL, build(&sqe, w));
    Wr two(IBV_WR_SEND, 2);
    siwx_sq_limits one = {1, SIWX_MAX_INLINE};
    EXPECT_EQ(EINVAL, build(&sqe, two, false, one));
    Wr neg(IBV_WR_SEND);
    neg.wr.num_sge = -1;
    EXPECT_EQ(EINVAL, build(&sqe, neg));
}

TEST(SqeBuild, InlineCopiesPayloadAndStoresLengthInNumSge) {
    char a[40], b[56];
    memset(a, 'a', sizeof(a));
    memset(b, 'b', sizeof(b));
    Wr w(IBV_WR_RDMA_WRITE, 2);
    w.sge[0] = {(uintptr_t)a, sizeof(a), 0};
    w.sge[1] = {(uintptr_t)b, sizeof(b), 0};
    w.wr.send_flags = IBV_SEND_INLINE;
    siwx_sqe sqe;
    ASSERT_EQ(0, build(&sqe, w));
    EXPECT_TRUE(sqe.flags & SIWX_WQE_INLINE);
    EXPECT_EQ(96, sqe.num_sge);
    EXPECT_EQ(0, memcmp(sqe.inline_data, a, 40));
    EXPECT_EQ(0, memcmp(sqe.inline_data + 40, b, 56));
    EXPECT_EQ(96u, siwx_sqe_length(&sqe));
}

TEST(SqeBuild, InlineBeyondLimitIsRefused) {
    char big[SIWX_MAX_INLINE + 1] = {};
    Wr w(IBV_WR_SEND, 1);
    w.sge[0] = {(uintptr_t)big, sizeof(big), 0};
    w.wr.send_flags = IBV_SEND_INLINE;
    siwx_sqe sqe;
    EXPECT_EQ(EINVAL, build(&sqe, w));
    w.sge[0].length = 33;
    siwx_sq_limits small = {SIWX_MAX_SGE, 32};
    EXPECT_EQ(EINVAL, build(&sqe, w, false, small));
    w.sge[0].length = 32;
    EXPECT_EQ(0, build(&sqe, w, false, small));
}

TEST(SqeBuild, ReadCannotBeInline) {
    Wr w(IBV_WR_RDMA_READ);
    w.wr.send_flags = IBV_SEND_INLINE;
    siwx_sqe sqe;
    EXPECT_EQ(EINVAL, build(&sqe, w));
}

TEST(RqeBuild, CopiesSglAndRefusesTooMany) {
    ibv_sge sge[SIWX_MAX_SGE + 1] = {};
    for (int i = 0; i <= SIWX_MAX_SGE; i++) sge[i] = {0x100u * i, 10u + i, 5u};
    ibv_recv_wr wr = {};
    wr.wr_id = 77;
    wr.sg_list = sge;
    wr.num_sge = 2;
    siwx_rqe rqe;
    ASSERT_EQ(0, siwx_rqe_from_recv_wr(&rqe, &wr, SIWX_MAX_SGE));
    EXPECT_EQ(77u, rqe.id);
    EXPECT_EQ(2, rqe.num_sge);
    EXPECT_EQ(11u, rqe.sge[1].length);
    EXPECT_EQ(0, rqe.flags);
    EXPECT_EQ(EINVAL, siwx_rqe_from_recv_wr(&rqe, &wr, 1));
    wr.num_sge = SIWX_MAX_SGE + 1;
    EXPECT_EQ(EINVAL, siwx_rqe_from_recv_wr(&rqe, &wr, 100));
}

}  // namespace
