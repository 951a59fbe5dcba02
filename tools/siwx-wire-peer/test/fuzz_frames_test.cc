// siwx-wire-fuzz's generator against the protocol core: deterministic
// per seed, every template a valid FPDU of its opcode for the core's RX
// parser, mutations that change the frame, endings the parser or the
// kernel's checks refuse.
#include "../fuzz_frames.h"

#include <gtest/gtest.h>

#include <set>

#include "../fuzz_judge.h"
#include "../hostile_proto.h"

extern "C" {
#include <siwx/proto/rdmap.h>
#include <siwx/proto/rx.h>
}

namespace wirepeer {
namespace {

const Target kTarget{0x7f0000201000ull, SIWX_HP_FUZZ_TARGET_LEN, 0x00000305, 0x00000406};

FuzzLimits Limits() {
    FuzzLimits l;
    l.frames = 300;
    l.recvs = SIWX_HP_FUZZ_MAX_RECVS;
    l.recv_len = SIWX_HP_FUZZ_RECV_LEN;
    return l;
}

struct Parsed {
    bool error = false;
    siwx_term term{};
    std::vector<siwx_rx_seg> segs;
};

Parsed Parse(const std::vector<Bytes>& fpdus) {
    siwx_rx rx;
    siwx_rx_init(&rx, true);
    Parsed p;
    for (const Bytes& f : fpdus) {
        size_t used = 0;
        while (used < f.size() && !p.error) {
            siwx_rx_event ev;
            used += siwx_rx_feed(&rx, f.data() + used, f.size() - used, &ev);
            if (ev.type == SIWX_RX_ERROR) p.error = true;
            if (ev.type == SIWX_RX_SEGMENT_END) p.segs.push_back(rx.seg);
        }
    }
    p.term = rx.term;
    return p;
}

TEST(FuzzFrames, SameSeedSameFrames) {
    for (uint64_t conn = 0; conn < 20; conn++) {
        FrameGen a(ConnSeed(42, conn), kTarget, true, Limits());
        FrameGen b(ConnSeed(42, conn), kTarget, true, Limits());
        const auto fa = a.Connection();
        const auto fb = b.Connection();
        ASSERT_EQ(fa.size(), fb.size());
        for (size_t i = 0; i < fa.size(); i++)
            EXPECT_EQ(fa[i].fpdu, fb[i].fpdu) << conn << " " << i;
    }
}

TEST(FuzzFrames, OtherSeedOtherFrames) {
    FrameGen a(ConnSeed(42, 0), kTarget, true, Limits());
    FrameGen b(ConnSeed(43, 0), kTarget, true, Limits());
    FrameGen c(ConnSeed(42, 1), kTarget, true, Limits());
    const auto fa = a.Connection(), fb = b.Connection(), fc = c.Connection();
    EXPECT_FALSE(fa.size() == fb.size() && fa[0].fpdu == fb[0].fpdu);
    EXPECT_FALSE(fa.size() == fc.size() && fa[0].fpdu == fc[0].fpdu);
}

// Every opcode's template, alone on a fresh stream, is a whole valid FPDU
// of that opcode for the parser siwx runs.
TEST(FuzzFrames, EveryTemplateParses) {
    for (uint64_t seed = 0; seed < 200; seed++) {
        for (uint8_t op : kFuzzOpcodes) {
            FrameGen g(seed, kTarget, true, Limits());
            const FuzzFrame f = g.Template(op);
            const Parsed p = Parse({f.fpdu});
            ASSERT_FALSE(p.error) << "opcode " << int(op) << ": " << DescribeTerm(p.term) << " "
                                  << Hex(f.fpdu);
            ASSERT_EQ(p.segs.size(), 1u) << "opcode " << int(op);
            EXPECT_EQ(p.segs[0].ddp.opcode, op);
            EXPECT_EQ(f.opcode, op);
        }
    }
}

TEST(FuzzFrames, EveryOpcodeHasATemplate) {
    std::set<uint8_t> ops(std::begin(kFuzzOpcodes), std::end(kFuzzOpcodes));
    EXPECT_EQ(ops.size(), size_t(SIWX_OP_COUNT));
    for (uint8_t op = 0; op < SIWX_OP_COUNT; op++) EXPECT_TRUE(ops.count(op)) << int(op);
}

TEST(FuzzFrames, MutationsChangeTheFrame) {
    for (uint64_t seed = 0; seed < 2000; seed++) {
        FrameGen g(seed, kTarget, true, Limits());
        FuzzFrame f = g.Template(kFuzzOpcodes[seed % SIWX_OP_COUNT]);
        const Bytes before = f.fpdu;
        g.Mutate(f);
        EXPECT_NE(f.fpdu, before) << seed;
        EXPECT_EQ(f.risk, Risk::kMaybe);
        EXPECT_EQ(f.req.kind, Request::Kind::kNone);
    }
}

// The body of a connection is a stream the parser takes whole (until a
// raw mutation or Send with Invalidate, which may be refused), and it
// ends in a frame that must be refused.
TEST(FuzzFrames, ValidPrefixParsesAndEndingIsRisky) {
    std::set<std::string> whats;
    for (uint64_t conn = 0; conn < 200; conn++) {
        FrameGen g(ConnSeed(7, conn), kTarget, true, Limits());
        const auto frames = g.Connection();
        ASSERT_FALSE(frames.empty());
        EXPECT_NE(frames.back().risk, Risk::kValid);
        std::vector<Bytes> valid;
        uint32_t qn0 = 0, requests = 0;
        for (const FuzzFrame& f : frames) {
            whats.insert(f.what);
            if (f.risk != Risk::kValid) break;
            valid.push_back(f.fpdu);
            if (f.on_qn1) requests++;
            if (!f.on_qn1 && f.opcode != SIWX_OP_WRITE) qn0++;
        }
        const Parsed p = Parse(valid);
        EXPECT_FALSE(p.error) << conn << ": " << DescribeTerm(p.term);
        EXPECT_EQ(p.segs.size(), valid.size());
        EXPECT_LE(qn0, SIWX_HP_FUZZ_MAX_RECVS) << "more Sends than receives";
        (void)requests;
    }
    for (const char* w : {"RDMA Write", "Read Request", "Atomic FetchAdd", "Atomic CmpSwap", "Send",
                          "Immediate Data", "RDMA Write, zero length"})
        EXPECT_TRUE(whats.count(w)) << w;
}

// The connection's budget is honoured: the ending follows at most
// @max_body frames.
TEST(FuzzFrames, BudgetCapsTheBody) {
    FrameGen g(ConnSeed(1, 1), kTarget, true, Limits());
    const auto frames = g.Connection(3);
    EXPECT_LE(frames.size(), 5u);
}

// Exact endings the parser itself refuses carry the cause it finds.
TEST(FuzzFrames, ParserEndingsMatchTheParser) {
    int checked = 0;
    for (uint64_t conn = 0; conn < 400; conn++) {
        FrameGen g(ConnSeed(9, conn), kTarget, true, Limits());
        const auto frames = g.Connection(0);
        const FuzzFrame& e = frames.back();
        if (!e.exact || frames.size() != 1) continue;
        const Parsed p = Parse({e.fpdu});
        // Opcodes (RDMAP's and RFC 7306's AOpCodes) are the parser's to refuse.
        if (siwx_term_eq(e.expect.cause,
                         siwx_term_make(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP,
                                        SIWX_RDMAP_UNEXPECTED_OPCODE))) {
            EXPECT_TRUE(p.error) << e.what << " " << Hex(e.fpdu);
        }
        if (!p.error) continue;  // refused later, by the kernel's checks
        EXPECT_TRUE(siwx_term_eq(p.term, e.expect.cause))
            << e.what << ": parser " << DescribeTerm(p.term) << ", want "
            << DescribeTerm(e.expect.cause);
        checked++;
    }
    EXPECT_GT(checked, 20);
}

// The judge: responses to our requests in order, a Terminate only after
// a risky frame, nothing after it.
Bytes TermFpdu() {
    siwx_term_hdr th{};
    th.cause = siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_CRC);
    Bytes h(siwx_term_hdr_len(&th));
    siwx_term_hdr_encode(&th, h.data());
    return Frame(UntaggedUlpdu(SIWX_OP_TERMINATE, SIWX_QN_TERM, 1, h), true);
}

Bytes AtomicRespFpdu(uint32_t req_id, uint32_t msn) {
    siwx_atomic_resp ar{req_id, 5};
    Bytes h(SIWX_ATOMIC_RESP_LEN);
    siwx_atomic_resp_encode(&ar, h.data());
    return Frame(UntaggedUlpdu(SIWX_OP_ATOMIC_RESP, SIWX_QN_ATOMIC_RESP, msn, h), true);
}

TEST(FuzzJudge, TerminateOnValidStreamFails) {
    ConnJudge j(true);
    const Bytes t = TermFpdu();
    EXPECT_FALSE(j.Feed(t.data(), t.size()));
    EXPECT_NE(j.why().find("valid stream"), std::string::npos);
}

TEST(FuzzJudge, TerminateAfterRiskyAndNothingAfter) {
    ConnJudge j(true);
    j.Risky();
    const Bytes t = TermFpdu();
    EXPECT_TRUE(j.Feed(t.data(), t.size()));
    EXPECT_TRUE(j.terminated());
    const Bytes a = AtomicRespFpdu(1, 1);
    EXPECT_FALSE(j.Feed(a.data(), a.size()));
}

TEST(FuzzJudge, AtomicResponsesInOrder) {
    ConnJudge j(true);
    Request r;
    r.kind = Request::Kind::kAtomic;
    r.req_id = 7;
    j.Issued(r);
    r.req_id = 8;
    j.Issued(r);
    EXPECT_EQ(j.outstanding(), 2u);
    const Bytes a = AtomicRespFpdu(7, 1);
    EXPECT_TRUE(j.Feed(a.data(), a.size()));
    EXPECT_EQ(j.outstanding(), 1u);
    const Bytes b = AtomicRespFpdu(9, 2);
    EXPECT_FALSE(j.Feed(b.data(), b.size()));
}

TEST(FuzzJudge, ReadResponseToItsSink) {
    ConnJudge j(true);
    Request r;
    r.kind = Request::Kind::kRead;
    r.sink_stag = 0x51570001;
    r.sink_to = 0x100000;
    r.size = 8;
    j.Issued(r);
    const Bytes ok = Frame(TaggedUlpdu(SIWX_OP_READ_RESP, r.sink_stag, r.sink_to, Bytes(8)), true);
    EXPECT_TRUE(j.Feed(ok.data(), ok.size())) << j.why();
    EXPECT_EQ(j.outstanding(), 0u);
    ConnJudge k(true);
    k.Issued(r);
    const Bytes bad = Frame(TaggedUlpdu(SIWX_OP_READ_RESP, r.sink_stag, r.sink_to, Bytes(4)), true);
    EXPECT_FALSE(k.Feed(bad.data(), bad.size()));
}

}  // namespace
}  // namespace wirepeer
