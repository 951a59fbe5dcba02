// Terminate causes for refused accesses and which headers a Terminate
// echoes (RFC 5040 section 7.1 and figure 10, RFC 7306 section 8).
#include <gtest/gtest.h>

#include "wire_builder.h"

using namespace siwx_test;

namespace {

siwx_term T(uint8_t layer, uint8_t etype, uint8_t code) { return {layer, etype, code}; }

TEST(TermForAccess, PlacementFaultsAreDdpTaggedErrors) {
    const uint8_t L = SIWX_LAYER_DDP, E = SIWX_DDP_ETYPE_TAGGED;
    EXPECT_EQ(siwx_term_for_access(SIWX_ACCESS_WRITE, SIWX_FAULT_INVALID_STAG), T(L, E, 0x00));
    EXPECT_EQ(siwx_term_for_access(SIWX_ACCESS_WRITE, SIWX_FAULT_ACCESS_RIGHTS), T(L, E, 0x00));
    EXPECT_EQ(siwx_term_for_access(SIWX_ACCESS_WRITE, SIWX_FAULT_BOUNDS), T(L, E, 0x01));
    EXPECT_EQ(siwx_term_for_access(SIWX_ACCESS_WRITE, SIWX_FAULT_NOT_ASSOC), T(L, E, 0x02));
    EXPECT_EQ(siwx_term_for_access(SIWX_ACCESS_WRITE, SIWX_FAULT_TO_WRAP), T(L, E, 0x03));
}

TEST(TermForAccess, ReadSourceAndAtomicFaultsAreRemoteProtection) {
    const uint8_t L = SIWX_LAYER_RDMAP, E = SIWX_RDMAP_ETYPE_REMOTE_PROT;
    for (auto kind : {SIWX_ACCESS_READ_SOURCE, SIWX_ACCESS_ATOMIC}) {
        EXPECT_EQ(siwx_term_for_access(kind, SIWX_FAULT_INVALID_STAG), T(L, E, 0x00));
        EXPECT_EQ(siwx_term_for_access(kind, SIWX_FAULT_BOUNDS), T(L, E, 0x01));
        EXPECT_EQ(siwx_term_for_access(kind, SIWX_FAULT_ACCESS_RIGHTS), T(L, E, 0x02));
        EXPECT_EQ(siwx_term_for_access(kind, SIWX_FAULT_NOT_ASSOC), T(L, E, 0x03));
        EXPECT_EQ(siwx_term_for_access(kind, SIWX_FAULT_TO_WRAP), T(L, E, 0x04));
    }
}

TEST(TermForAccess, MisalignedAtomicIsCatastrophicLocalized) {
    // RFC 7306 section 8.2.
    EXPECT_EQ(siwx_term_for_access(SIWX_ACCESS_ATOMIC, SIWX_FAULT_MISALIGNED),
              T(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP, 0x07));
}

TEST(TermForAccess, InvalidateFaults) {
    EXPECT_EQ(siwx_term_for_access(SIWX_ACCESS_INVALIDATE, SIWX_FAULT_INVALID_STAG),
              T(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_PROT, 0x00));
    EXPECT_EQ(siwx_term_for_access(SIWX_ACCESS_INVALIDATE, SIWX_FAULT_NOT_ASSOC),
              T(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_PROT, 0x09));
}

const Bytes kUntaggedHdr = Untagged(true, SIWX_OP_READ_REQ, 1, 4, 0);
const Bytes kTaggedHdr = Tagged(true, SIWX_OP_WRITE, 0x10, 0x20);

TEST(TermBuild, DdpErrorEchoesDdpHeaderOnly) {
    siwx_term_hdr h;
    Bytes rdma(28, 0x33);
    siwx_term_hdr_build(&h, T(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, 1), 1000, kTaggedHdr.data(),
                        kTaggedHdr.size(), rdma.data());
    EXPECT_EQ(h.hdrct, SIWX_TERM_HDRCT_M | SIWX_TERM_HDRCT_D);
    Bytes out(siwx_term_hdr_len(&h));
    siwx_term_hdr_encode(&h, out.data());
    EXPECT_EQ(Hex(out), Hex(Cat({Bytes{0x11, 0x01, 0xc0, 0x00}, Be16(1000), kTaggedHdr})));
}

TEST(TermBuild, ReadRequestProtectionErrorEchoesRdmaHeader) {
    siwx_term_hdr h;
    Bytes rdma(28, 0x33);
    siwx_term_hdr_build(&h, T(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_PROT, 0), 46,
                        kUntaggedHdr.data(), kUntaggedHdr.size(), rdma.data());
    Bytes out(siwx_term_hdr_len(&h));
    siwx_term_hdr_encode(&h, out.data());
    EXPECT_EQ(Hex(out), Hex(Cat({Bytes{0x01, 0x00, 0xe0, 0x00}, Be16(46), kUntaggedHdr, rdma})));
}

TEST(TermBuild, LlpAndCatastrophicEchoNothing) {
    siwx_term_hdr h;
    siwx_term_hdr_build(&h, T(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_CRC), 10,
                        kTaggedHdr.data(), kTaggedHdr.size(), nullptr);
    EXPECT_EQ(h.hdrct, 0);
    EXPECT_EQ(siwx_term_hdr_len(&h), 4u);
    siwx_term_hdr_build(&h, T(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_CATASTROPHIC, 0), 10,
                        kTaggedHdr.data(), kTaggedHdr.size(), nullptr);
    EXPECT_EQ(h.hdrct, 0);
    // Errors not tied to an incoming message (RFC 7306 8.1 rule 1).
    siwx_term_hdr_build(&h, T(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP, 7), 0, nullptr, 0,
                        nullptr);
    EXPECT_EQ(h.hdrct, 0);
}

TEST(TermClassify, WhatAPeersTerminateMeans) {
    EXPECT_EQ(siwx_term_classify(T(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_PROT, 2)),
              SIWX_TERM_REMOTE_ACCESS);
    EXPECT_EQ(siwx_term_classify(T(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_TAGGED, 1)),
              SIWX_TERM_REMOTE_ACCESS);
    EXPECT_EQ(siwx_term_classify(T(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_TOO_LONG)),
              SIWX_TERM_REMOTE_INVALID);
    // Upstream siw's answer to an RFC 7306 opcode it does not implement.
    EXPECT_EQ(siwx_term_classify(
                  T(SIWX_LAYER_RDMAP, SIWX_RDMAP_ETYPE_REMOTE_OP, SIWX_RDMAP_UNEXPECTED_OPCODE)),
              SIWX_TERM_REMOTE_OP);
    // A misaligned atomic (RFC 7306 section 8.2).
    EXPECT_EQ(siwx_term_classify(siwx_term_for_access(SIWX_ACCESS_ATOMIC, SIWX_FAULT_MISALIGNED)),
              SIWX_TERM_REMOTE_OP);
    EXPECT_EQ(siwx_term_classify(T(SIWX_LAYER_DDP, SIWX_DDP_ETYPE_UNTAGGED, SIWX_DDP_UT_NO_BUFFER)),
              SIWX_TERM_REMOTE_OP);
    EXPECT_EQ(siwx_term_classify(T(SIWX_LAYER_LLP, SIWX_LLP_ETYPE_MPA, SIWX_LLP_CRC)),
              SIWX_TERM_REMOTE_OP);
}

TEST(TermDecode, RoundTripAndMalformed) {
    siwx_term_hdr in;
    Bytes rdma(28, 0x44);
    siwx_term_hdr_build(&in, T(0, 1, 2), 46, kUntaggedHdr.data(), kUntaggedHdr.size(), rdma.data());
    Bytes wire(siwx_term_hdr_len(&in));
    siwx_term_hdr_encode(&in, wire.data());
    siwx_term_hdr out;
    ASSERT_TRUE(siwx_term_hdr_decode(wire.data(), wire.size(), &out));
    EXPECT_EQ(out.cause, in.cause);
    EXPECT_EQ(out.hdrct, in.hdrct);
    EXPECT_EQ(out.ddp_seg_len, 46);
    EXPECT_EQ(Bytes(out.ddp_hdr, out.ddp_hdr + out.ddp_hdr_len), kUntaggedHdr);
    EXPECT_EQ(Bytes(out.rdma_hdr, out.rdma_hdr + 28), rdma);
    for (size_t cut = 0; cut < wire.size(); ++cut)
        EXPECT_FALSE(siwx_term_hdr_decode(wire.data(), cut, &out)) << cut;
    wire.push_back(0);  // trailing octets are malformed too
    EXPECT_FALSE(siwx_term_hdr_decode(wire.data(), wire.size(), &out));
}

}  // namespace
