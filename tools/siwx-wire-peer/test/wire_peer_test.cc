// siwx-wire-peer's cases checked against the protocol core, the receiver
// siwx runs: every FPDU a case sends is fed to the core's RX parser, which
// must either find exactly the error the case expects (and hold the DDP
// header the kernel echoes), or accept the segment so that the kernel's
// memory checks decide, with the cause siwx_term_for_access() maps the
// fault to. The reply judge is checked against Terminates the core builds.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "../cases.h"
#include "../hostile_proto.h"

extern "C" {
#include <siwx/proto/bytes.h>
#include <siwx/proto/rdmap.h>
#include <siwx/proto/rdq.h>
#include <siwx/proto/rx.h>
}

namespace wirepeer {
namespace {

const Target kTarget{0x7f0000001040ull, SIWX_HP_TARGET_LEN, 0x00000305, 0x00000406};

struct ParseResult {
    bool error = false;
    siwx_term term{};
    siwx_rx_seg seg{};
    bool ended = false;  // SEGMENT_END seen
};

ParseResult Parse(const Plan& p) {
    siwx_rx rx;
    siwx_rx_init(&rx, true);
    ParseResult r;
    for (const Bytes& f : p.fpdus) {
        size_t used = 0;
        while (used < f.size() && !r.error) {
            siwx_rx_event ev;
            used += siwx_rx_feed(&rx, f.data() + used, f.size() - used, &ev);
            if (ev.type == SIWX_RX_ERROR) r.error = true;
            if (ev.type == SIWX_RX_SEGMENT_END) r.ended = true;
        }
    }
    r.term = rx.term;
    r.seg = rx.seg;
    return r;
}

// Where siwx decides each case: the parser, the kernel's memory checks
// (with the fault they find), the receive queue, or a valid operation.
enum class Where {
    kParser,
    kAtomicFault,
    kWriteFault,
    kReadFault,
    kNoRecv,
    kRecvTooShort,
    kUnsolicited,
    kValid
};
struct Decision {
    Where where;
    siwx_access_fault fault = SIWX_FAULT_INVALID_STAG;
};

const std::map<std::string, Decision>& Decisions() {
    static const std::map<std::string, Decision> d = {
        {"atomic-misaligned", {Where::kAtomicFault, SIWX_FAULT_MISALIGNED}},
        {"cmpswap-misaligned", {Where::kAtomicFault, SIWX_FAULT_MISALIGNED}},
        {"atomic-oob", {Where::kAtomicFault, SIWX_FAULT_BOUNDS}},
        {"atomic-below", {Where::kAtomicFault, SIWX_FAULT_BOUNDS}},
        {"atomic-bad-stag", {Where::kAtomicFault, SIWX_FAULT_INVALID_STAG}},
        {"atomic-no-rights", {Where::kAtomicFault, SIWX_FAULT_ACCESS_RIGHTS}},
        {"atomic-reserved-aop", {Where::kParser}},
        {"fetchadd", {Where::kValid}},
        {"fetchadd-masked", {Where::kValid}},
        {"cmpswap", {Where::kValid}},
        {"cmpswap-masked", {Where::kValid}},
        {"cmpswap-miss", {Where::kValid}},
        {"write-zero-any-stag", {Where::kValid}},
        {"imm-short", {Where::kParser}},
        {"imm-long", {Where::kParser}},
        {"imm-no-recv", {Where::kNoRecv}},
        {"bad-opcode", {Where::kParser}},
        {"rdmap-version", {Where::kParser}},
        {"ddp-version", {Where::kParser}},
        {"ddp-version-tagged", {Where::kParser}},
        {"write-no-rights", {Where::kWriteFault, SIWX_FAULT_ACCESS_RIGHTS}},
        {"write-second-no-rights", {Where::kWriteFault, SIWX_FAULT_ACCESS_RIGHTS}},
        {"write-second-oob", {Where::kWriteFault, SIWX_FAULT_BOUNDS}},
        {"write-to-wrap", {Where::kWriteFault, SIWX_FAULT_TO_WRAP}},
        {"atomic-to-wrap", {Where::kAtomicFault, SIWX_FAULT_TO_WRAP}},
        {"read-bad-stag", {Where::kReadFault, SIWX_FAULT_INVALID_STAG}},
        {"send-too-long", {Where::kRecvTooShort}},
        {"send-bad-msn", {Where::kParser}},
        {"read-rdmap-version", {Where::kParser}},
        {"unsolicited-atomic-resp", {Where::kUnsolicited}},
        {"bad-crc", {Where::kParser}},
        {"bad-crc-payload", {Where::kParser}},
    };
    return d;
}

TEST(WirePeerCases, EveryCaseHasADecision) {
    for (const Case& c : Cases()) EXPECT_EQ(Decisions().count(c.name), 1u) << c.name;
    EXPECT_EQ(Decisions().size(), Cases().size());
}

TEST(WirePeerCases, CoreReceiverAgrees) {
    for (const Case& c : Cases()) {
        SCOPED_TRACE(c.name);
        const Plan p = c.build(kTarget, true);
        ASSERT_FALSE(p.fpdus.empty());
        const Decision& d = Decisions().at(c.name);
        const ParseResult r = Parse(p);
        if (d.where == Where::kParser) {
            ASSERT_TRUE(r.error);
            EXPECT_TRUE(siwx_term_eq(r.term, p.expect.cause)) << DescribeTerm(r.term);
            // What the kernel echoes (kernel/siwx_rx_term.c: rx.seg.raw).
            if (!p.expect.echo_ddp.empty()) {
                EXPECT_EQ(Bytes(r.seg.raw, r.seg.raw + r.seg.ddp_hdr_len), p.expect.echo_ddp);
                EXPECT_EQ(r.seg.ulpdu_len, p.expect.seg_len);
            }
            // What the kernel echoes as the Read Request (kernel/siwx_rx_term.c
            // siwx_rx_terminate: rx.seg.u.read).
            if (!p.expect.echo_rdma.empty()) {
                Bytes rh(SIWX_READ_REQ_LEN);
                siwx_read_req_encode(&r.seg.u.read, rh.data());
                EXPECT_EQ(rh, p.expect.echo_rdma);
            }
            continue;
        }
        ASSERT_FALSE(r.error) << DescribeTerm(r.term);
        ASSERT_TRUE(r.ended);
        const Bytes& f = p.fpdus.back();
        const Bytes sent_ddp = DdpHeaderOf(Bytes(f.begin() + 2, f.end()));
        EXPECT_EQ(Bytes(r.seg.raw, r.seg.raw + r.seg.ddp_hdr_len), sent_ddp);
        if (!p.expect.echo_ddp.empty()) {
            EXPECT_EQ(p.expect.echo_ddp, sent_ddp);
        }
        switch (d.where) {
            case Where::kAtomicFault:
                EXPECT_EQ(r.seg.ddp.opcode, SIWX_OP_ATOMIC_REQ);
                EXPECT_TRUE(siwx_term_eq(siwx_term_for_access(SIWX_ACCESS_ATOMIC, d.fault),
                                         p.expect.cause));
                EXPECT_FALSE(p.change);
                break;
            case Where::kWriteFault:
                EXPECT_EQ(r.seg.ddp.opcode, SIWX_OP_WRITE);
                EXPECT_TRUE(
                    siwx_term_eq(siwx_term_for_access(SIWX_ACCESS_WRITE, d.fault), p.expect.cause));
                break;
            case Where::kReadFault:
                EXPECT_EQ(r.seg.ddp.opcode, SIWX_OP_READ_REQ);
                EXPECT_TRUE(siwx_term_eq(siwx_term_for_access(SIWX_ACCESS_READ_SOURCE, d.fault),
                                         p.expect.cause));
                EXPECT_EQ(p.expect.echo_rdma.size(), size_t(SIWX_READ_REQ_LEN));
                break;
            case Where::kRecvTooShort:
                // The receives hostile_target.c posts are 64 octets.
                EXPECT_EQ(r.seg.ddp.opcode, SIWX_OP_SEND);
                EXPECT_GT(r.seg.payload_len, 64u);
                break;
            case Where::kUnsolicited: {
                siwx_rdq orq;
                siwx_rdq_init(&orq, 4);
                siwx_term err{};
                EXPECT_EQ(siwx_rdq_atomic_response(&orq, &r.seg.u.atomic_resp, &err), nullptr);
                EXPECT_TRUE(siwx_term_eq(err, p.expect.cause));
                break;
            }
            case Where::kNoRecv:
                EXPECT_EQ(r.seg.ddp.opcode, SIWX_OP_IMM);
                EXPECT_EQ(p.recvs, 0u);
                break;
            case Where::kValid: {
                ASSERT_EQ(p.expect.kind, Expect::Kind::kAtomicResponse);
                const siwx_atomic_req& a = r.seg.u.atomic;
                EXPECT_EQ(a.stag, kTarget.rkey);
                EXPECT_EQ(a.to, kTarget.addr + 8ull * p.word);
                EXPECT_EQ(a.to % 8, 0u);
                EXPECT_EQ(p.expect.orig, siwx_hp_pattern(p.word));
                EXPECT_EQ(p.value, siwx_atomic_apply(&a, p.expect.orig));
                EXPECT_EQ(p.change, p.value != p.expect.orig);
                break;
            }
            default:
                FAIL();
        }
    }
}

// The zero-length Write in front of the FetchAdd is one the Data Sink
// takes without an STag (siwx_ddp_tagged_needs_stag), not a fault.
TEST(WirePeerCases, ZeroLengthWriteNamesNoStag) {
    Plan p = FindCase("write-zero-any-stag")->build(kTarget, true);
    ASSERT_EQ(p.fpdus.size(), 2u);
    p.fpdus.resize(1);
    const ParseResult r = Parse(p);
    ASSERT_FALSE(r.error) << DescribeTerm(r.term);
    EXPECT_EQ(r.seg.ddp.opcode, SIWX_OP_WRITE);
    EXPECT_EQ(r.seg.ddp.stag, 0u);
    EXPECT_EQ(r.seg.payload_len, 0u);
    EXPECT_FALSE(siwx_ddp_tagged_needs_stag(r.seg.payload_len));
    EXPECT_TRUE(siwx_ddp_tagged_needs_stag(1));
}

TEST(WirePeerCases, MemoryExpectationsIgnoreTheTarget) {
    for (const Case& c : Cases()) {
        const Plan a = c.build(Target{}, true);
        const Plan b = c.build(kTarget, true);
        EXPECT_EQ(a.recvs, b.recvs) << c.name;
        EXPECT_EQ(a.change, b.change) << c.name;
        EXPECT_EQ(a.word, b.word) << c.name;
        EXPECT_EQ(a.value, b.value) << c.name;
    }
}

TEST(WirePeerCases, ExpectedValues) {
    const Plan p = FindCase("fetchadd")->build(kTarget, true);
    EXPECT_EQ(p.value, siwx_hp_pattern(3) + 0x0000000100000001ull);
    const Plan q = FindCase("cmpswap")->build(kTarget, true);
    EXPECT_EQ(q.value, 0x1122334455667788ull);
    EXPECT_FALSE(FindCase("cmpswap-miss")->build(kTarget, true).change);
    EXPECT_EQ(FindCase("atomic-oob")->build(kTarget, true).expect.cause.ecode,
              SIWX_RDMAP_BASE_BOUNDS);
}

// A Terminate as siwx would send it, for @cause about @ulpdu.
siwx_rx_seg ServerTerminate(siwx_term cause, const Bytes& ulpdu, bool echo) {
    siwx_term_hdr h;
    const Bytes ddp = DdpHeaderOf(ulpdu);
    siwx_term_hdr_build(&h, cause, uint16_t(ulpdu.size()), echo ? ddp.data() : nullptr, ddp.size(),
                        nullptr);
    Bytes th(siwx_term_hdr_len(&h));
    siwx_term_hdr_encode(&h, th.data());
    ReplyReader rd(true);
    const Bytes f = Frame(UntaggedUlpdu(SIWX_OP_TERMINATE, SIWX_QN_TERM, 1, th), true);
    rd.Feed(f.data(), f.size());
    EXPECT_FALSE(rd.broken());
    EXPECT_EQ(rd.messages().size(), 1u);
    return rd.messages().empty() ? siwx_rx_seg{} : rd.messages()[0];
}

TEST(WirePeerJudge, AcceptsOnlyTheExpectedTerminate) {
    const Plan p = FindCase("atomic-misaligned")->build(kTarget, true);
    const Bytes u(p.fpdus[0].begin() + 2, p.fpdus[0].begin() + 2 + p.expect.seg_len);
    EXPECT_EQ(Judge(p.expect, ServerTerminate(p.expect.cause, u, true)), "");
    siwx_term wrong = p.expect.cause;
    wrong.ecode = SIWX_RDMAP_UNEXPECTED_OPCODE;
    EXPECT_NE(Judge(p.expect, ServerTerminate(wrong, u, true)), "");
    EXPECT_NE(Judge(p.expect, ServerTerminate(p.expect.cause, u, false)), "");
    Bytes other = u;
    other[17] ^= 1;  // another MSN in the echoed header
    EXPECT_NE(Judge(p.expect, ServerTerminate(p.expect.cause, other, true)), "");
}

TEST(WirePeerJudge, LlpTerminateEchoesNothing) {
    const Plan p = FindCase("bad-crc")->build(kTarget, true);
    const Bytes u(p.fpdus[0].begin() + 2, p.fpdus[0].begin() + 2 + 18 + 52);
    EXPECT_EQ(Judge(p.expect, ServerTerminate(p.expect.cause, u, true)), "");
}

// The octet changed under the CRC is the Add Data's: were the CRC not
// checked, the FetchAdd would add 3, not 1, and the target would show it.
TEST(WirePeerCases, BadCrcPayloadChangesTheAddData) {
    const Plan p = FindCase("bad-crc-payload")->build(kTarget, true);
    const Bytes& f = p.fpdus.at(0);
    const size_t ulpdu_len = siwx_get_be16(f.data());
    siwx_atomic_req r{};
    siwx_term err{};
    ASSERT_TRUE(siwx_atomic_req_decode(f.data() + 2 + ulpdu_len - SIWX_ATOMIC_REQ_LEN, &r, &err));
    EXPECT_EQ(r.add_swap, 3u);
    EXPECT_EQ(r.aopcode, SIWX_AOP_FETCH_ADD);
}

TEST(WirePeerJudge, AtomicResponse) {
    const Plan p = FindCase("fetchadd")->build(kTarget, true);
    siwx_atomic_resp r{p.expect.req_id, p.expect.orig};
    Bytes b(SIWX_ATOMIC_RESP_LEN);
    siwx_atomic_resp_encode(&r, b.data());
    ReplyReader rd(true);
    const Bytes f = Frame(UntaggedUlpdu(SIWX_OP_ATOMIC_RESP, SIWX_QN_ATOMIC_RESP, 1, b), true);
    rd.Feed(f.data(), f.size());
    ASSERT_EQ(rd.messages().size(), 1u);
    EXPECT_EQ(Judge(p.expect, rd.messages()[0]), "");
    Expect e = p.expect;
    e.orig ^= 1;
    EXPECT_NE(Judge(e, rd.messages()[0]), "");
}

}  // namespace
}  // namespace wirepeer
