// The cost plugin's decisions at translation: which bytes are the marker,
// which are REP string instructions, which kernel addresses are the tick
// or the idle loop.
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "address_classes.h"
#include "call_stacks.h"
#include "x86_insn.h"

namespace siwx_cost {
namespace {

bool Rep(std::vector<uint8_t> b) { return IsRepString(b.data(), b.size()); }

TEST(Mark, RoundTrips) {
    for (unsigned id : {0u, 1u, 255u, 256u, 4242u, 65535u}) {
        uint8_t b[kMarkSize];
        EncodeMark(static_cast<uint16_t>(id), b);
        auto got = DecodeMark(b, sizeof(b));
        ASSERT_TRUE(got.has_value());
        EXPECT_EQ(*got, id);
    }
}

TEST(Mark, IsTheNopWithOurDisplacement) {
    uint8_t b[kMarkSize];
    EncodeMark(0x1234, b);
    const uint8_t want[] = {0x0f, 0x1f, 0x84, 0x00, 0x34, 0x12, 0x57, 0x51};
    EXPECT_EQ(std::vector<uint8_t>(b, b + kMarkSize), std::vector<uint8_t>(want, want + 8));
}

TEST(Mark, CompilersPaddingIsNoMark) {
    const uint8_t pad[] = {0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00};
    EXPECT_FALSE(DecodeMark(pad, sizeof(pad)).has_value());
    const uint8_t pad16[] = {0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00};
    EXPECT_FALSE(DecodeMark(pad16, sizeof(pad16)).has_value());
    uint8_t b[kMarkSize];
    EncodeMark(7, b);
    EXPECT_FALSE(DecodeMark(b, kMarkSize - 1).has_value());
}

TEST(RepString, PrefixedStringOps) {
    EXPECT_TRUE(Rep({0xf3, 0xa4}));              // rep movsb
    EXPECT_TRUE(Rep({0xf3, 0x48, 0xa5}));        // rep movsq
    EXPECT_TRUE(Rep({0xf3, 0xaa}));              // rep stosb
    EXPECT_TRUE(Rep({0xf3, 0x48, 0xab}));        // rep stosq
    EXPECT_TRUE(Rep({0xf3, 0xa6}));              // repe cmpsb
    EXPECT_TRUE(Rep({0xf2, 0xae}));              // repne scasb
    EXPECT_TRUE(Rep({0x66, 0xf3, 0xa5}));        // rep movsw
    EXPECT_TRUE(Rep({0xf3, 0x6c}));              // rep insb
    EXPECT_TRUE(Rep({0xf3, 0x67, 0x48, 0xa5}));  // rep movsq, 32-bit addresses
}

TEST(RepString, OthersAreNot) {
    EXPECT_FALSE(Rep({0xa4}));                          // movsb without rep
    EXPECT_FALSE(Rep({0xf3, 0x90}));                    // pause
    EXPECT_FALSE(Rep({0xf3, 0xc3}));                    // rep ret
    EXPECT_FALSE(Rep({0xf3, 0x0f, 0xb8, 0xc0}));        // popcnt
    EXPECT_FALSE(Rep({0xf3, 0x48, 0x0f, 0xbc, 0xc0}));  // tzcnt
    EXPECT_FALSE(Rep({0xf2, 0x0f, 0x38, 0xf1, 0xc1}));  // crc32
    EXPECT_FALSE(Rep({0xf3, 0x0f, 0x1e, 0xfa}));        // endbr64
    EXPECT_FALSE(Rep({0xf3}));
    EXPECT_FALSE(Rep({}));
}

TEST(Iret, OnlyIretq) {
    const uint8_t iretq[] = {0x48, 0xcf};
    EXPECT_TRUE(IsIret(iretq, 2));
    const uint8_t iret[] = {0xcf};
    EXPECT_FALSE(IsIret(iret, 1));
    const uint8_t sysret[] = {0x48, 0x0f, 0x07};
    EXPECT_FALSE(IsIret(sysret, 3));
}

TEST(AddressClasses, TickEntryIsItsStartOnly) {
    std::istringstream in(
        "ffffffff81c00000 ffffffff81c00020 tick-entry timer_entry\n"
        "ffffffff81c00020 ffffffff81c00040 tick next\n"
        "ffffffff81c00040 ffffffff81c00060 irq-entry nic_entry\n");
    AddressClasses c;
    std::string error;
    ASSERT_TRUE(c.Load(in, &error)) << error;
    EXPECT_EQ(c.EntryAt(0xffffffff81c00000), AddressClass::kTickEntry);
    EXPECT_EQ(c.EntryAt(0xffffffff81c00010), AddressClass::kPath);
    EXPECT_EQ(c.EntryAt(0xffffffff81c00020), AddressClass::kPath);
    EXPECT_EQ(c.EntryAt(0xffffffff81c00040), AddressClass::kIrqEntry);
    EXPECT_EQ(c.Of(0xffffffff81c00050), AddressClass::kIrqEntry);
    EXPECT_EQ(c.Of(0xffffffff81c00010), AddressClass::kTickEntry);
}

TEST(AddressClasses, Lookup) {
    std::istringstream in(
        "# a comment\n"
        "ffffffff81000100 ffffffff81000200 tick hrtimer_interrupt\n"
        "\n"
        "ffffffff81000000 ffffffff81000080 idle do_idle  # out of order\n");
    AddressClasses c;
    std::string error;
    ASSERT_TRUE(c.Load(in, &error)) << error;
    EXPECT_EQ(c.size(), 2u);
    EXPECT_EQ(c.Of(0xffffffff81000000), AddressClass::kIdle);
    EXPECT_EQ(c.Of(0xffffffff8100007f), AddressClass::kIdle);
    EXPECT_EQ(c.Of(0xffffffff81000080), AddressClass::kPath);
    EXPECT_EQ(c.Of(0xffffffff81000150), AddressClass::kTick);
    EXPECT_EQ(c.Of(0xffffffff81000200), AddressClass::kPath);
    EXPECT_EQ(c.Of(0xffffffff80ffffff), AddressClass::kPath);
    EXPECT_EQ(c.Of(0x401000), AddressClass::kPath);
}

TEST(AddressClasses, RefusesBadLines) {
    const char* bad[] = {"ffffffff81000000 ffffffff81000080 softirq x\n", "zz 10 tick\n",
                         "20 10 tick\n", "10 30 tick a\n20 40 idle b\n"};
    for (const char* text : bad) {
        std::istringstream in(text);
        AddressClasses c;
        std::string error;
        EXPECT_FALSE(c.Load(in, &error)) << text;
        EXPECT_FALSE(error.empty());
    }
}

bool Call(std::vector<uint8_t> b) { return IsCall(b.data(), b.size()); }
bool Ret(std::vector<uint8_t> b) { return IsRet(b.data(), b.size()); }

TEST(Insn, CallsAndRets) {
    EXPECT_TRUE(Call({0xe8, 0x10, 0x20, 0x30, 0x40}));   // call rel32
    EXPECT_TRUE(Call({0xff, 0xd0}));                     // call *%rax
    EXPECT_TRUE(Call({0x41, 0xff, 0xd3}));               // call *%r11
    EXPECT_TRUE(Call({0xff, 0x15, 1, 2, 3, 4}));         // call *disp(%rip)
    EXPECT_FALSE(Call({0xff, 0xe0}));                    // jmp *%rax
    EXPECT_FALSE(Call({0xe9, 0x10, 0x20, 0x30, 0x40}));  // jmp rel32
    EXPECT_FALSE(Call({0xff, 0xc0}));                    // inc %eax
    EXPECT_TRUE(Ret({0xc3}));
    EXPECT_TRUE(Ret({0xf3, 0xc3}));
    EXPECT_TRUE(Ret({0xc2, 0x08, 0x00}));
    EXPECT_FALSE(Ret({0x48, 0xcf}));  // iretq
    EXPECT_FALSE(Ret({0xcc}));
}

using Chain = std::vector<uint64_t>;

// The open calls' return addresses, innermost first, at most @max.
Chain ChainOf(const CallStacks& s, size_t max = 8) {
    Chain c(max);
    c.resize(s.Chain(c.data(), max));
    return c;
}

TEST(CallStacks, ChainIsTheOpenCallsInnermostFirst) {
    CallStacks s;
    const uint64_t top = 0xffffc90000004000;  // one 16 KiB stack's end
    s.Call(top - 8, 0xa);
    s.Call(top - 0x40, 0xb);
    s.Call(top - 0x80, 0xc);
    EXPECT_EQ(ChainOf(s), (Chain{0xc, 0xb, 0xa}));
    EXPECT_EQ(ChainOf(s, 2), (Chain{0xc, 0xb}));
    s.Ret(top - 0x80);  // c returned: b's callee is next, at another depth
    s.Call(top - 0x60, 0xd);
    EXPECT_EQ(ChainOf(s), (Chain{0xd, 0xb, 0xa}));
}

TEST(CallStacks, ACallBelowForgetsCallsThatReturnedUnseen) {
    CallStacks s;
    const uint64_t top = 0xffffc90000008000;
    s.Call(top - 8, 0xa);
    s.Call(top - 0x100, 0xb);  // b's frame ends without a RET we saw
    s.Call(top - 0x80, 0xc);   // a's next callee, above b's old slot
    EXPECT_EQ(ChainOf(s), (Chain{0xc, 0xa}));
}

TEST(CallStacks, EachStackKeepsItsOwn) {
    CallStacks s;
    const uint64_t task1 = 0xffffc90000004000, task2 = 0xffffc90000010000;
    s.Call(task1 - 8, 0x1);
    s.Call(task1 - 0x40, 0x2);
    s.Call(task2 - 8, 0x3);  // another task (or an interrupt stack)
    EXPECT_EQ(ChainOf(s), (Chain{0x3}));
    const uint64_t g = s.generation();
    s.Ret(task1 - 0x40);  // back on the first task's stack
    EXPECT_NE(s.generation(), g);
    EXPECT_EQ(ChainOf(s), (Chain{0x1}));
}

}  // namespace
}  // namespace siwx_cost
