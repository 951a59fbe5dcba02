// The kernel/provider ABI (include/siwx/abi.h) is shared memory and udata:
// its layout is a contract. Any change to it must be deliberate, so the
// sizes and the offsets both sides rely on are pinned here.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cstddef>

extern "C" {
#include <siwx/abi.h>
#include <siwx/sqe_op.h>
}

namespace {

static_assert(sizeof(siwx_sge) == 16);
static_assert(sizeof(siwx_sqe) == 160);
static_assert(offsetof(siwx_sqe, flags) == 8);
static_assert(offsetof(siwx_sqe, rkey) == 12);
static_assert(offsetof(siwx_sqe, raddr) == 16);
static_assert(offsetof(siwx_sqe, imm) == 24);
static_assert(offsetof(siwx_sqe, add_swap) == 32);
static_assert(offsetof(siwx_sqe, compare_mask) == 56);
// The bind's names lie where the bind put its operands before it had them.
static_assert(offsetof(siwx_sqe, bind.length) == offsetof(siwx_sqe, add_swap));
static_assert(offsetof(siwx_sqe, bind.access) == offsetof(siwx_sqe, add_swap_mask));
static_assert(offsetof(siwx_sqe, bind.mr_lkey) == offsetof(siwx_sqe, compare));
static_assert(sizeof(siwx_sqe_bind) == 32);
static_assert(offsetof(siwx_sqe, sge) == 64);
static_assert(sizeof(siwx_sqe::inline_data) == SIWX_MAX_INLINE);
static_assert(sizeof(siwx_rqe) == 112);
static_assert(offsetof(siwx_rqe, sge) == 16);
static_assert(sizeof(siwx_cqe) == 40);
static_assert(offsetof(siwx_cqe, flags) == 8);
static_assert(offsetof(siwx_cqe, bytes) == 12);
static_assert(offsetof(siwx_cqe, imm) == 24);
static_assert(offsetof(siwx_cqe, ts_ns) == 32);
static_assert(sizeof(siwx_cq_ctrl) == 16);
static_assert(offsetof(siwx_cq_ctrl, wall_offset_ns) == 8);
static_assert(sizeof(siwx_sq_ctrl) == 8);
static_assert(sizeof(siwx_uresp_alloc_ctx) == 8);
static_assert(sizeof(siwx_uresp_create_cq) == 16);
static_assert(sizeof(siwx_uresp_create_qp) == 32);
static_assert(sizeof(siwx_uresp_create_srq) == 16);

TEST(Abi, FlagsAreDistinctBits) {
    const unsigned wqe[] = {SIWX_WQE_VALID,     SIWX_WQE_INLINE, SIWX_WQE_SIGNALLED,
                            SIWX_WQE_SOLICITED, SIWX_WQE_FENCE,  SIWX_WQE_IMM_FULL};
    unsigned seen = 0;
    for (unsigned f : wqe) {
        EXPECT_EQ(f & (f - 1), 0u);
        EXPECT_EQ(seen & f, 0u);
        seen |= f;
    }
}

// The provider copies CQE opcode and status into ibv_wc unchanged.
TEST(Abi, WcValuesAreLibibverbsValues) {
    EXPECT_EQ(SIWX_WC_SEND, IBV_WC_SEND);
    EXPECT_EQ(SIWX_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE);
    EXPECT_EQ(SIWX_WC_RDMA_READ, IBV_WC_RDMA_READ);
    EXPECT_EQ(SIWX_WC_COMP_SWAP, IBV_WC_COMP_SWAP);
    EXPECT_EQ(SIWX_WC_FETCH_ADD, IBV_WC_FETCH_ADD);
    EXPECT_EQ(SIWX_WC_LOCAL_INV, IBV_WC_LOCAL_INV);
    EXPECT_EQ(SIWX_WC_RECV, IBV_WC_RECV);
    EXPECT_EQ(SIWX_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM);
    EXPECT_EQ(SIWX_WC_SUCCESS, IBV_WC_SUCCESS);
    EXPECT_EQ(SIWX_WC_LOC_LEN_ERR, IBV_WC_LOC_LEN_ERR);
    EXPECT_EQ(SIWX_WC_LOC_QP_OP_ERR, IBV_WC_LOC_QP_OP_ERR);
    EXPECT_EQ(SIWX_WC_LOC_PROT_ERR, IBV_WC_LOC_PROT_ERR);
    EXPECT_EQ(SIWX_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(SIWX_WC_BAD_RESP_ERR, IBV_WC_BAD_RESP_ERR);
    EXPECT_EQ(SIWX_WC_LOC_ACCESS_ERR, IBV_WC_LOC_ACCESS_ERR);
    EXPECT_EQ(SIWX_WC_REM_INV_REQ_ERR, IBV_WC_REM_INV_REQ_ERR);
    EXPECT_EQ(SIWX_WC_REM_ACCESS_ERR, IBV_WC_REM_ACCESS_ERR);
    EXPECT_EQ(SIWX_WC_REM_OP_ERR, IBV_WC_REM_OP_ERR);
    EXPECT_EQ(SIWX_WC_FATAL_ERR, IBV_WC_FATAL_ERR);
    EXPECT_EQ(SIWX_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR);
}

// SQE opcodes are the uverbs work request opcodes, equal to ibv_wr_opcode.
TEST(Abi, WrOpcodesAreLibibverbsValues) {
    EXPECT_EQ(IB_UVERBS_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE);
    EXPECT_EQ(IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM);
    EXPECT_EQ(IB_UVERBS_WR_SEND, IBV_WR_SEND);
    EXPECT_EQ(IB_UVERBS_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM);
    EXPECT_EQ(IB_UVERBS_WR_RDMA_READ, IBV_WR_RDMA_READ);
    EXPECT_EQ(IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP);
    EXPECT_EQ(IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD);
    EXPECT_EQ(IB_UVERBS_WR_LOCAL_INV, IBV_WR_LOCAL_INV);
    EXPECT_EQ(IB_UVERBS_WR_SEND_WITH_INV, IBV_WR_SEND_WITH_INV);
}

// The one opcode map the provider's checks and the kernel's TX engine
// share: the four verbs atomics and nothing else are RFC 7306 atomics,
// and exactly Reads and atomics take an ORQ entry.
TEST(SqeOp, AtomicsAndResponsesByOpcode) {
    for (unsigned op = 0; op < 256; op++) {
        SCOPED_TRACE(op);
        enum siwx_sqe_atomic want = SIWX_SQE_NOT_ATOMIC;
        if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IB_UVERBS_WR_MASKED_ATOMIC_FETCH_AND_ADD)
            want = SIWX_SQE_FETCH_ADD;
        if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IB_UVERBS_WR_MASKED_ATOMIC_CMP_AND_SWP)
            want = SIWX_SQE_CMP_SWAP;
        EXPECT_EQ(want, siwx_sqe_atomic_op(op));
        const bool read = op == IBV_WR_RDMA_READ || op == IB_UVERBS_WR_RDMA_READ_WITH_INV;
        EXPECT_EQ(read || want != SIWX_SQE_NOT_ATOMIC, siwx_sqe_op_awaits_response(op) != 0);
    }
}

}  // namespace
