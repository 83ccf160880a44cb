//go:build !purego

#include "textflag.h"

// func indexSpecialSSE2(p *byte, n int) int
//
// Requires n >= 16. Returns the index of the first byte among p[:n] that
// is '"', '\\', below 0x20 or at least 0x80, or n. One signed compare
// catches the last two classes: a byte below 0x20 or at least 0x80 (a
// negative int8) is less than 0x20 as an int8.
TEXT ·indexSpecialSSE2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), BX
	MOVQ SI, DI                 // DI: start of s
	LEAQ -16(SI)(BX*1), R8      // R8: start of the last whole block

	MOVQ $0x2222222222222222, AX
	MOVQ AX, X8
	PUNPCKLQDQ X8, X8           // X8: '"' in every byte
	MOVQ $0x5c5c5c5c5c5c5c5c, AX
	MOVQ AX, X9
	PUNPCKLQDQ X9, X9           // X9: '\\'
	MOVQ $0x2020202020202020, AX
	MOVQ AX, X10
	PUNPCKLQDQ X10, X10         // X10: 0x20

	LEAQ -16(R8), R9            // R9: last start for a 32-byte step
	JMP  test32

test32:
	CMPQ SI, R9
	JLS  step32
	JMP  loop16

step32:
	MOVOU (SI), X0
	MOVOU 16(SI), X4
	MOVOA X0, X1
	MOVOA X0, X2
	MOVOA X10, X3
	PCMPEQB X8, X0
	PCMPEQB X9, X1
	PCMPGTB X2, X3
	POR  X1, X0
	POR  X3, X0
	MOVOA X4, X5
	MOVOA X4, X6
	MOVOA X10, X7
	PCMPEQB X8, X4
	PCMPEQB X9, X5
	PCMPGTB X6, X7
	POR  X5, X4
	POR  X7, X4
	MOVOA X0, X1
	POR  X4, X1
	PMOVMSKB X1, AX
	TESTL AX, AX
	JNZ  found32
	ADDQ $32, SI
	JMP  test32

found32:
	PMOVMSKB X0, AX
	PMOVMSKB X4, CX
	SHLL $16, CX
	ORL  CX, AX
	JMP  found

loop16:
	CMPQ SI, R8
	JA   tail
	MOVOU (SI), X0
	MOVOA X0, X1
	MOVOA X0, X2
	MOVOA X10, X3
	PCMPEQB X8, X0
	PCMPEQB X9, X1
	PCMPGTB X2, X3
	POR  X1, X0
	POR  X3, X0
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
	MOVOA X0, X1
	MOVOA X0, X2
	MOVOA X10, X3
	PCMPEQB X8, X0
	PCMPEQB X9, X1
	PCMPGTB X2, X3
	POR  X1, X0
	POR  X3, X0
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
