#include "x86_insn.h"

#include <cstring>

namespace siwx_cost {

void EncodeMark(uint16_t id, uint8_t out[kMarkSize]) {
    const uint32_t disp = kMarkMagic | id;
    out[0] = 0x0f;
    out[1] = 0x1f;
    out[2] = 0x84;  // ModRM: disp32 with a SIB byte, reg field /0 (NOP)
    out[3] = 0x00;  // SIB: (%rax,%rax,1)
    for (int i = 0; i < 4; ++i) out[4 + i] = static_cast<uint8_t>(disp >> (8 * i));
}

std::optional<uint16_t> DecodeMark(const uint8_t* insn, size_t size) {
    if (size != kMarkSize) return std::nullopt;
    uint8_t want[kMarkSize];
    EncodeMark(0, want);
    if (std::memcmp(insn, want, 4) != 0 || insn[6] != want[6] || insn[7] != want[7])
        return std::nullopt;
    return static_cast<uint16_t>(insn[4] | insn[5] << 8);
}

namespace {

bool IsLegacyPrefix(uint8_t b) {
    switch (b) {
        case 0xf0:  // LOCK
        case 0xf2:  // REPNE
        case 0xf3:  // REP, REPE
        case 0x2e:
        case 0x36:
        case 0x3e:
        case 0x26:
        case 0x64:
        case 0x65:  // segment overrides
        case 0x66:  // operand size
        case 0x67:  // address size
            return true;
        default:
            return false;
    }
}

bool IsStringOpcode(uint8_t op) {
    return (op >= 0x6c && op <= 0x6f) ||  // INS, OUTS
           (op >= 0xa4 && op <= 0xa7) ||  // MOVS, CMPS
           (op >= 0xaa && op <= 0xaf);    // STOS, LODS, SCAS
}

}  // namespace

bool IsIret(const uint8_t* insn, size_t size) {
    return size == 2 && insn[0] == 0x48 && insn[1] == 0xcf;
}

bool IsRepString(const uint8_t* insn, size_t size) {
    bool rep = false;
    size_t i = 0;
    for (; i < size && IsLegacyPrefix(insn[i]); ++i) rep |= insn[i] == 0xf2 || insn[i] == 0xf3;
    if (i < size && (insn[i] & 0xf0) == 0x40) ++i;  // REX comes last, right before the opcode
    return rep && i + 1 == size && IsStringOpcode(insn[i]);
}

bool IsCall(const uint8_t* insn, size_t size) {
    size_t i = 0;
    for (; i < size && IsLegacyPrefix(insn[i]); ++i) {
    }
    if (i < size && (insn[i] & 0xf0) == 0x40) ++i;
    if (i + 5 == size && insn[i] == 0xe8) return true;
    return i + 1 < size && insn[i] == 0xff && ((insn[i + 1] >> 3) & 7) == 2;
}

bool IsRet(const uint8_t* insn, size_t size) {
    size_t i = size > 0 && insn[0] == 0xf3 ? 1 : 0;
    return (i + 1 == size && insn[i] == 0xc3) || (i + 3 == size && insn[i] == 0xc2);
}

}  // namespace siwx_cost
