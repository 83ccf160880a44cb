//go:build !purego

#include "textflag.h"

// SPECIAL16 turns each byte of x into 0xff if it is '"', '\\', below 0x20
// or at least 0x80, else 0; t1 and t2 are scratch. X8, X9 and X10 hold
// '"', '\\' and 0x20 in every byte. One signed compare catches the last
// two classes: a byte below 0x20 or at least 0x80 (a negative int8) is
// less than 0x20 as an int8.
#define SPECIAL16(x, t1, t2) \
	MOVOA   x, t1; \
	MOVOA   X10, t2; \
	PCMPGTB x, t2; \
	PCMPEQB X9, t1; \
	PCMPEQB X8, x; \
	POR     t1, x; \
	POR     t2, x

// func indexSpecialSSE2(p *byte, n int) int
//
// Requires n >= 16. Returns the index of the first byte among p[:n] that
// is '"', '\\', below 0x20 or at least 0x80, or n.
TEXT ·indexSpecialSSE2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), BX
	MOVQ SI, DI                 // DI: start of s
	LEAQ -16(SI)(BX*1), R8      // R8: start of the last whole block
	LEAQ -16(R8), R9            // R9: last start for a 32-byte step

	MOVQ $0x2222222222222222, AX
	MOVQ AX, X8
	PUNPCKLQDQ X8, X8           // X8: '"' in every byte
	MOVQ $0x5c5c5c5c5c5c5c5c, AX
	MOVQ AX, X9
	PUNPCKLQDQ X9, X9           // X9: '\\'
	MOVQ $0x2020202020202020, AX
	MOVQ AX, X10
	PUNPCKLQDQ X10, X10         // X10: 0x20

loop32:
	CMPQ SI, R9
	JHI  loop16
	MOVOU (SI), X0
	MOVOU 16(SI), X4
	SPECIAL16(X0, X1, X2)
	SPECIAL16(X4, X5, X6)
	MOVOA X0, X1
	POR   X4, X1
	PMOVMSKB X1, AX
	TESTL AX, AX
	JNZ   found32
	ADDQ  $32, SI
	JMP   loop32

found32:
	PMOVMSKB X0, AX
	PMOVMSKB X4, CX
	SHLL $16, CX
	ORL  CX, AX
	JMP  found

loop16:
	CMPQ SI, R8
	JHI  tail
	MOVOU (SI), X0
	SPECIAL16(X0, X1, X2)
	PMOVMSKB X0, AX
	TESTL AX, AX
	JNZ  found
	ADDQ $16, SI
	JMP  loop16

tail:
	// Fewer than 16 bytes left (maybe none): test the last whole block,
	// which overlaps bytes already known to be plain, so its first
	// special byte, if any, is the first of s.
	LEAQ (DI)(BX*1), AX
	CMPQ SI, AX
	JEQ  none
	MOVQ R8, SI
	MOVOU (SI), X0
	SPECIAL16(X0, X1, X2)
	PMOVMSKB X0, AX
	TESTL AX, AX
	JNZ  found

none:
	MOVQ BX, ret+16(FP)
	RET

found:
	BSFL AX, AX
	SUBQ DI, SI
	ADDQ SI, AX
	MOVQ AX, ret+16(FP)
	RET
