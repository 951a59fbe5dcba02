// What the cost plugin needs to know of an x86 instruction's bytes, decided
// once at translation: whether it is a string instruction with a REP
// prefix (QEMU 7.2 runs each iteration of one as an instruction of its
// own), whether it is siwx's marker, and whether it is a CALL or a RET
// (for the profile's call stacks, call_stacks.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace siwx_cost {

// The marker: nopl MARK(%rax,%rax,1), i.e. 0f 1f 84 00 followed by the
// 32-bit displacement 0x5157'0000 | id. A NOP to a CPU; no compiler or
// assembler pads with a displacement like it (theirs is 0).
constexpr uint32_t kMarkMagic = 0x51570000;
constexpr size_t kMarkSize = 8;

// The marker's bytes for @id.
void EncodeMark(uint16_t id, uint8_t out[kMarkSize]);

// The id of the marker these @size bytes are, if they are one.
std::optional<uint16_t> DecodeMark(const uint8_t* insn, size_t size);

// Whether these bytes are IRETQ, with which the kernel returns from an
// interrupt.
bool IsIret(const uint8_t* insn, size_t size);

// Whether these bytes are a string instruction (MOVS, STOS, LODS, CMPS,
// SCAS, INS, OUTS) behind a REP/REPE/REPNE prefix.
bool IsRepString(const uint8_t* insn, size_t size);

// Whether these bytes are a near CALL (E8 rel32, or FF /2 through a
// register or memory), which stores its return address on the stack.
bool IsCall(const uint8_t* insn, size_t size);

// Whether these bytes are a near RET (C3, C2 imm16, either behind REP),
// which loads its return address from the stack.
bool IsRet(const uint8_t* insn, size_t size);

}  // namespace siwx_cost
