// The hostile cases of siwx-wire-peer (see cases.h).
#include "cases.h"

#include "hostile_proto.h"

extern "C" {
#include <siwx/proto/ddp.h>
#include <siwx/proto/rdmap.h>
}

namespace wirepeer {

namespace {

constexpr uint32_t kReqId = 0x00c0ffee;
constexpr uint32_t kFirstMsn = 1;  // RFC 5041 section 5.1
// The last octet of an Atomic Request's Add or Swap Data (RFC 7306 section
// 5.2.1: octets 20-27 of the 52), counted from the end of the ULPDU.
constexpr size_t kAtomicAddDataLowFromEnd = SIWX_ATOMIC_REQ_LEN - 27;

uint64_t WordTo(const Target& t, uint32_t word) { return t.addr + 8ull * word; }

siwx_atomic_req FetchAdd(uint32_t stag, uint64_t to, uint64_t add, uint64_t mask) {
    siwx_atomic_req r{};
    siwx_atomic_req_fetch_add(&r, kReqId, stag, to, add, mask);
    return r;
}

siwx_atomic_req CmpSwap(uint32_t stag, uint64_t to, uint64_t cmp, uint64_t cmp_mask, uint64_t swap,
                        uint64_t swap_mask) {
    siwx_atomic_req r{};
    siwx_atomic_req_cmp_swap(&r, kReqId, stag, to, cmp, cmp_mask, swap, swap_mask);
    return r;
}

// An Atomic Request on QN 1 (RFC 7306 section 4.1).
Bytes AtomicUlpdu(const siwx_atomic_req& r) {
    return UntaggedUlpdu(SIWX_OP_ATOMIC_REQ, SIWX_QN_READ, kFirstMsn, AtomicRequestHeader(r));
}

// Immediate Data on QN 0 (RFC 7306 section 6.3) with @len octets.
Bytes ImmUlpdu(size_t len) {
    Bytes imm(len);
    for (size_t i = 0; i < len; i++) imm[i] = uint8_t(0xd0 + i);
    return UntaggedUlpdu(SIWX_OP_IMM, SIWX_QN_SEND, kFirstMsn, imm);
}

// One FPDU whose DDP header the Terminate must echo.
Plan Echoing(const Bytes& ulpdu, bool crc_on, siwx_term cause, std::string sent) {
    Plan p;
    p.fpdus.push_back(Frame(ulpdu, crc_on));
    p.sent = std::move(sent);
    p.expect.cause = cause;
    p.expect.echo_ddp = DdpHeaderOf(ulpdu);
    p.expect.seg_len = uint16_t(ulpdu.size());
    return p;
}

siwx_term RdmapOp(uint8_t code) {
    return siwx_term_make(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP, code);
}

siwx_term RdmapProt(uint8_t code) {
    return siwx_term_make(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_PROT, code);
}

// A valid atomic on @word: the Atomic Response carries the pattern value
// and the word ends as the core's reference (siwx_atomic_apply) says.
Plan ValidAtomic(const siwx_atomic_req& r, uint32_t word, std::string sent) {
    Plan p;
    p.fpdus.push_back(Frame(AtomicUlpdu(r), true));
    p.sent = std::move(sent);
    p.expect.kind = Expect::Kind::kAtomicResponse;
    p.expect.req_id = r.req_id;
    p.expect.orig = siwx_hp_pattern(word);
    p.word = word;
    p.value = siwx_atomic_apply(&r, p.expect.orig);
    p.change = p.value != p.expect.orig;
    return p;
}

// A tagged message of two segments: @first (L clear), then @last, whose
// DDP header the Terminate must echo. The receiver holds the MR of the
// first segment for the second and must check the second all the same
// (RFC 5041 section 7.2: each segment's STag, TO and length).
Plan SecondSegmentRefused(const Bytes& first, const Bytes& last, bool crc_on, siwx_term cause,
                          std::string sent) {
    Bytes u = first;
    u[0] &= uint8_t(~SIWX_DDP_L_FLAG);
    Plan p = Echoing(last, crc_on, cause, std::move(sent));
    p.fpdus.insert(p.fpdus.begin(), Frame(u, crc_on));
    return p;
}

// The first segment of those messages: 8 octets to word 9, placed.
constexpr uint32_t kFirstSegmentWord = 9;
constexpr uint8_t kFirstSegmentOctet = 0x77;

Plan PlacedFirst(Plan p) {
    p.change = true;
    p.word = kFirstSegmentWord;
    p.value = 0x0101010101010101ull * kFirstSegmentOctet;
    return p;
}

std::vector<Case> MakeCases() {
    std::vector<Case> c;
    // RFC 7306 section 8.2: alignment is checked by RDMAP; the error is
    // Remote Operation / Catastrophic error, localized to RDMAP Stream,
    // and section 5.1.1: memory MUST NOT be modified.
    c.push_back({"atomic-misaligned", "FetchAdd at a tagged offset 4 octets into word 1",
                 [](const Target& t, bool crc) {
                     auto r = FetchAdd(t.rkey, WordTo(t, 1) + 4, 1, 0);
                     return Echoing(AtomicUlpdu(r), crc, RdmapOp(SIWX_RDMAP_CATASTROPHIC_STREAM),
                                    "Atomic Request FetchAdd, misaligned TO");
                 }});
    c.push_back({"cmpswap-misaligned", "CmpSwap at a tagged offset 2 octets into word 2",
                 [](const Target& t, bool crc) {
                     auto r = CmpSwap(t.rkey, WordTo(t, 2) + 2, 0, 0, ~0ull, ~0ull);
                     return Echoing(AtomicUlpdu(r), crc, RdmapOp(SIWX_RDMAP_CATASTROPHIC_STREAM),
                                    "Atomic Request CmpSwap (compare mask 0), misaligned TO");
                 }});
    // RFC 7306 section 8 applies RFC 5040 section 7's protection errors
    // to Atomic Requests as to Read Requests: RDMAP Remote Protection.
    c.push_back({"atomic-oob", "FetchAdd on the word just past the registered region",
                 [](const Target& t, bool crc) {
                     auto r = FetchAdd(t.rkey, t.addr + t.len, 1, 0);
                     return Echoing(AtomicUlpdu(r), crc, RdmapProt(SIWX_RDMAP_BASE_BOUNDS),
                                    "Atomic Request FetchAdd, TO = end of region");
                 }});
    c.push_back({"atomic-below", "FetchAdd on the word just before the registered region",
                 [](const Target& t, bool crc) {
                     auto r = FetchAdd(t.rkey, t.addr - 8, 1, 0);
                     return Echoing(AtomicUlpdu(r), crc, RdmapProt(SIWX_RDMAP_BASE_BOUNDS),
                                    "Atomic Request FetchAdd, TO = start - 8");
                 }});
    c.push_back({"atomic-bad-stag", "FetchAdd with the rkey's key octet changed",
                 [](const Target& t, bool crc) {
                     auto r = FetchAdd(t.rkey ^ 0x5a, WordTo(t, 0), 1, 0);
                     return Echoing(AtomicUlpdu(r), crc, RdmapProt(SIWX_RDMAP_INVALID_STAG),
                                    "Atomic Request FetchAdd, invalid STag");
                 }});
    c.push_back({"atomic-no-rights", "FetchAdd through the REMOTE_READ-only registration",
                 [](const Target& t, bool crc) {
                     auto r = FetchAdd(t.ro_rkey, WordTo(t, 0), 1, 0);
                     return Echoing(AtomicUlpdu(r), crc, RdmapProt(SIWX_RDMAP_ACCESS_RIGHTS),
                                    "Atomic Request FetchAdd, STag without REMOTE_ATOMIC");
                 }});
    // RFC 7306 section 5.2.1: AOpCode 1 is reserved (README: Unexpected OpCode).
    c.push_back({"atomic-reserved-aop", "Atomic Request with the reserved AOpCode 1",
                 [](const Target& t, bool crc) {
                     auto r = FetchAdd(t.rkey, WordTo(t, 0), 1, 0);
                     r.aopcode = 1;
                     return Echoing(AtomicUlpdu(r), crc, RdmapOp(SIWX_RDMAP_UNEXPECTED_OPCODE),
                                    "Atomic Request, AOpCode 1");
                 }});
    c.push_back({"fetchadd", "valid FetchAdd on word 3", [](const Target& t, bool) {
                     return ValidAtomic(FetchAdd(t.rkey, WordTo(t, 3), 0x0000000100000001ull, 0), 3,
                                        "Atomic Request FetchAdd, add 0x0000000100000001");
                 }});
    c.push_back({"fetchadd-masked", "valid masked FetchAdd (16-bit fields) on word 4",
                 [](const Target& t, bool) {
                     return ValidAtomic(FetchAdd(t.rkey, WordTo(t, 4), 0x8001800180018001ull,
                                                 0x8000800080008000ull),
                                        4, "Atomic Request FetchAdd, four 16-bit fields");
                 }});
    c.push_back({"cmpswap", "valid CmpSwap on word 5 that matches", [](const Target& t, bool) {
                     return ValidAtomic(CmpSwap(t.rkey, WordTo(t, 5), siwx_hp_pattern(5), ~0ull,
                                                0x1122334455667788ull, ~0ull),
                                        5, "Atomic Request CmpSwap, compare = current value");
                 }});
    c.push_back({"cmpswap-masked", "valid masked CmpSwap on word 6 (high half compared)",
                 [](const Target& t, bool) {
                     const uint64_t hi = 0xffffffff00000000ull;
                     return ValidAtomic(CmpSwap(t.rkey, WordTo(t, 6), siwx_hp_pattern(6) & hi, hi,
                                                0xcafef00dcafef00dull, ~hi),
                                        6, "Atomic Request CmpSwap, masked");
                 }});
    // A zero-length RDMA Write places nothing, so it names no STag that
    // must be valid (siwx_ddp_tagged_needs_stag; rsockets sends credit
    // updates that way): no Terminate, and the FetchAdd behind it is served.
    c.push_back(
        {"write-zero-any-stag", "zero-length RDMA Write to STag 0, then a FetchAdd on word 8",
         [](const Target& t, bool crc) {
             Plan p = ValidAtomic(FetchAdd(t.rkey, WordTo(t, 8), 5, 0), 8,
                                  "zero-length RDMA Write to STag 0 and TO 0, then "
                                  "Atomic Request FetchAdd, add 5");
             p.fpdus.insert(p.fpdus.begin(), Frame(TaggedUlpdu(SIWX_OP_WRITE, 0, 0, Bytes()), crc));
             return p;
         }});
    c.push_back(
        {"cmpswap-miss", "CmpSwap on word 7 whose compare fails", [](const Target& t, bool) {
             return ValidAtomic(CmpSwap(t.rkey, WordTo(t, 7), ~siwx_hp_pattern(7), ~0ull, 0, ~0ull),
                                7, "Atomic Request CmpSwap, compare != current value");
         }});
    // RFC 7306 section 8.2 (the Remote Peer MUST check exactly 8 octets,
    // section 6.3): RDMAP Remote Operation, localized catastrophic.
    c.push_back({"imm-short", "Immediate Data with 4 octets", [](const Target&, bool crc) {
                     return Echoing(ImmUlpdu(4), crc, RdmapOp(SIWX_RDMAP_CATASTROPHIC_STREAM),
                                    "Immediate Data, 4 octets");
                 }});
    c.push_back({"imm-long", "Immediate Data with 12 octets", [](const Target&, bool crc) {
                     return Echoing(ImmUlpdu(12), crc, RdmapOp(SIWX_RDMAP_CATASTROPHIC_STREAM),
                                    "Immediate Data, 12 octets");
                 }});
    // RFC 7306 section 6.3: Immediate Data consumes an untagged buffer;
    // none posted is RFC 5041 section 7.2's "No Buffer Available".
    c.push_back(
        {"imm-no-recv", "valid Immediate Data, no receive posted", [](const Target&, bool crc) {
             Plan p = Echoing(
                 ImmUlpdu(SIWX_IMM_LEN), crc,
                 siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_NO_BUFFER),
                 "Immediate Data, 8 octets");
             p.recvs = 0;
             return p;
         }});
    // RFC 5040 section 7.2: the RDMA OpCode must be valid.
    c.push_back({"bad-opcode", "untagged message with the unassigned opcode 0xc on QN 0",
                 [](const Target&, bool crc) {
                     return Echoing(UntaggedUlpdu(0xc, SIWX_QN_SEND, kFirstMsn, Bytes(8, 0x42)),
                                    crc, RdmapOp(SIWX_RDMAP_UNEXPECTED_OPCODE),
                                    "opcode 0xc, 8 octets");
                 }});
    c.push_back({"rdmap-version", "FetchAdd with RDMAP version 0", [](const Target& t, bool crc) {
                     Bytes u = AtomicUlpdu(FetchAdd(t.rkey, WordTo(t, 2), 1, 0));
                     u[1] &= 0x3f;  // RV, RFC 5040 section 4.2
                     return Echoing(u, crc, RdmapOp(SIWX_RDMAP_INVALID_VERSION),
                                    "Atomic Request FetchAdd, RV 0");
                 }});
    // RFC 5041 section 7.2: DDP version errors, per buffer model.
    c.push_back({"ddp-version", "FetchAdd with DDP version 2", [](const Target& t, bool crc) {
                     Bytes u = AtomicUlpdu(FetchAdd(t.rkey, WordTo(t, 2), 1, 0));
                     SetDdpVersion(u, 2);
                     return Echoing(u, crc,
                                    siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED,
                                                   SIWX_DDP_UT_INVALID_VERSION),
                                    "Atomic Request FetchAdd, DV 2");
                 }});
    c.push_back(
        {"ddp-version-tagged", "RDMA Write with DDP version 0", [](const Target& t, bool crc) {
             Bytes u = TaggedUlpdu(SIWX_OP_WRITE, t.rkey, WordTo(t, 8), Bytes(16, 0x77));
             SetDdpVersion(u, 0);
             return Echoing(
                 u, crc,
                 siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, SIWX_DDP_T_INVALID_VERSION),
                 "RDMA Write 16 octets, DV 0");
         }});
    // README decision: DDP has no access-rights code; Invalid STag.
    c.push_back({"write-no-rights", "RDMA Write through the REMOTE_READ-only registration",
                 [](const Target& t, bool crc) {
                     Bytes u = TaggedUlpdu(SIWX_OP_WRITE, t.ro_rkey, WordTo(t, 8), Bytes(16, 0x77));
                     return Echoing(u, crc,
                                    siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED,
                                                   SIWX_DDP_T_INVALID_STAG),
                                    "RDMA Write 16 octets, STag without REMOTE_WRITE");
                 }});
    c.push_back(
        {"write-second-no-rights",
         "RDMA Write of two segments, the second through the REMOTE_READ-only STag",
         [](const Target& t, bool crc) {
             return PlacedFirst(SecondSegmentRefused(
                 TaggedUlpdu(SIWX_OP_WRITE, t.rkey, WordTo(t, kFirstSegmentWord),
                             Bytes(8, kFirstSegmentOctet)),
                 TaggedUlpdu(SIWX_OP_WRITE, t.ro_rkey, WordTo(t, 10), Bytes(8, 0x55)), crc,
                 siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, SIWX_DDP_T_INVALID_STAG),
                 "RDMA Write 8 octets (L clear), then 8 octets through an STag "
                 "without REMOTE_WRITE"));
         }});
    c.push_back(
        {"write-second-oob", "RDMA Write of two segments, the second past the end of the region",
         [](const Target& t, bool crc) {
             return PlacedFirst(SecondSegmentRefused(
                 TaggedUlpdu(SIWX_OP_WRITE, t.rkey, WordTo(t, kFirstSegmentWord),
                             Bytes(8, kFirstSegmentOctet)),
                 TaggedUlpdu(SIWX_OP_WRITE, t.rkey, t.addr + t.len - 8, Bytes(16, 0x55)), crc,
                 siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, SIWX_DDP_T_BASE_BOUNDS),
                 "RDMA Write 8 octets (L clear), then 16 octets at end of region - 8"));
         }});
    // RFC 5041 section 7.2 / RFC 5040 section 7.2: a TO + length that
    // wraps 2^64 (the kernel's bounds test must not wrap with it).
    c.push_back(
        {"write-to-wrap", "RDMA Write of 16 octets at TO 2^64 - 8", [](const Target& t, bool crc) {
             Bytes u = TaggedUlpdu(SIWX_OP_WRITE, t.rkey, ~7ull, Bytes(16, 0x77));
             return Echoing(
                 u, crc, siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, SIWX_DDP_T_TO_WRAP),
                 "RDMA Write 16 octets, TO 0xfffffffffffffff8");
         }});
    c.push_back(
        {"atomic-to-wrap", "FetchAdd at TO 2^64 - 8 (TO + 8 wraps)", [](const Target& t, bool crc) {
             auto r = FetchAdd(t.rkey, ~7ull, 1, 0);
             return Echoing(AtomicUlpdu(r), crc, RdmapProt(SIWX_RDMAP_TO_WRAP),
                            "Atomic Request FetchAdd, TO 0xfffffffffffffff8");
         }});
    // RFC 5040 section 7.1 rule 3: a refused Read Request is echoed whole.
    c.push_back({"read-bad-stag", "RDMA Read Request with an invalid source STag",
                 [](const Target& t, bool crc) {
                     siwx_read_req rr{0x1234, 0x1000, 16, t.rkey ^ 0x5a, t.addr};
                     Bytes h(SIWX_READ_REQ_LEN);
                     siwx_read_req_encode(&rr, h.data());
                     Plan p = Echoing(UntaggedUlpdu(SIWX_OP_READ_REQ, SIWX_QN_READ, kFirstMsn, h),
                                      crc, RdmapProt(SIWX_RDMAP_INVALID_STAG),
                                      "RDMA Read Request 16 octets, invalid source STag");
                     p.expect.echo_rdma = h;
                     return p;
                 }});
    // The core's reading of rule 3 (core/term.c): every RDMAP-layer error
    // on a Read Request echoes it, a header error too.
    c.push_back({"read-rdmap-version", "RDMA Read Request with RDMAP version 0",
                 [](const Target& t, bool crc) {
                     siwx_read_req rr{0x1234, 0x1000, 16, t.rkey, t.addr};
                     Bytes h(SIWX_READ_REQ_LEN);
                     siwx_read_req_encode(&rr, h.data());
                     Bytes u = UntaggedUlpdu(SIWX_OP_READ_REQ, SIWX_QN_READ, kFirstMsn, h);
                     u[1] &= 0x3f;  // RV, RFC 5040 section 4.2
                     Plan p = Echoing(u, crc, RdmapOp(SIWX_RDMAP_INVALID_VERSION),
                                      "RDMA Read Request 16 octets, RV 0");
                     p.expect.echo_rdma = h;
                     return p;
                 }});
    // RFC 5041 section 7.2: untagged buffer errors.
    c.push_back(
        {"send-too-long", "Send of 100 octets into a 64-octet receive",
         [](const Target&, bool crc) {
             return Echoing(
                 UntaggedUlpdu(SIWX_OP_SEND, SIWX_QN_SEND, kFirstMsn, Bytes(100, 0x33)), crc,
                 siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_TOO_LONG),
                 "Send 100 octets");
         }});
    c.push_back(
        {"send-bad-msn", "Send whose MSN is 2 on a fresh stream", [](const Target&, bool crc) {
             return Echoing(
                 UntaggedUlpdu(SIWX_OP_SEND, SIWX_QN_SEND, 2, Bytes(8, 0x33)), crc,
                 siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_MSN_RANGE),
                 "Send 8 octets, MSN 2");
         }});
    // No Atomic Request outstanding: QN 3 has no buffer (core/rdq.c).
    c.push_back(
        {"unsolicited-atomic-resp", "Atomic Response nobody asked for",
         [](const Target&, bool crc) {
             siwx_atomic_resp ar{kReqId, 42};
             Bytes h(SIWX_ATOMIC_RESP_LEN);
             siwx_atomic_resp_encode(&ar, h.data());
             return Echoing(
                 UntaggedUlpdu(SIWX_OP_ATOMIC_RESP, SIWX_QN_ATOMIC_RESP, kFirstMsn, h), crc,
                 siwx_term_make(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_NO_BUFFER),
                 "Atomic Response, no request outstanding");
         }});
    // RFC 5044 section 8: a CRC error is an LLP error and echoes no
    // headers (RFC 5040 figure 10); the atomic must not run before its
    // CRC is checked.
    c.push_back(
        {"bad-crc", "valid FetchAdd on word 2 with a corrupted CRC", [](const Target& t, bool crc) {
             Plan p;
             Bytes f = Frame(AtomicUlpdu(FetchAdd(t.rkey, WordTo(t, 2), 1, 0)), crc);
             CorruptCrc(f);
             p.fpdus.push_back(f);
             p.sent = "Atomic Request FetchAdd, CRC with one bit flipped";
             p.expect.cause = siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_CRC);
             return p;
         }});
    // What a corruption that TCP's checksum misses looks like to MPA: the
    // payload changed after its CRC was computed (RFC 5044 section 4.4).
    // The Add Data of 1 would become 3: executed, word 2 would show it.
    c.push_back({"bad-crc-payload", "valid FetchAdd on word 2, its Add Data changed after the CRC",
                 [](const Target& t, bool crc) {
                     Plan p;
                     const Bytes u = AtomicUlpdu(FetchAdd(t.rkey, WordTo(t, 2), 1, 0));
                     Bytes f = Frame(u, crc);
                     f.at(SIWX_MPA_LEN_FIELD + u.size() - kAtomicAddDataLowFromEnd) ^= 0x02;
                     p.fpdus.push_back(f);
                     p.sent = "Atomic Request FetchAdd 1, Add Data 3 under the CRC of 1";
                     p.expect.cause =
                         siwx_term_make(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_CRC);
                     return p;
                 }});
    return c;
}

}  // namespace

const std::vector<Case>& Cases() {
    static const std::vector<Case> cases = MakeCases();
    return cases;
}

const Case* FindCase(const std::string& name) {
    for (const Case& c : Cases())
        if (name == c.name) return &c;
    return nullptr;
}

}  // namespace wirepeer
