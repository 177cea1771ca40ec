/*
 * Chooses the limb layout of arithmetic modulo 2^255 - 19 for the point code (ge25519.h) by
 * one explicit macro, which every build sets on its command line:
 *   AKD_FIELD_LIMBS=5   five 51-bit limbs with 128-bit products (fe25519_51.h): the addon,
 *                       on 64-bit hosts (binding.gyp);
 *   AKD_FIELD_LIMBS=10  ten signed limbs of 26 and 25 bits with 64-bit products
 *                       (fe25519_10.h): core's WebAssembly module (scripts/build-wasm.mjs),
 *                       whose i64.mul has no 128-bit form. x8.c vectorises this layout.
 * Both headers provide the same fe_* interface and FE25519_* constants; neither is chosen
 * by default, so a build that forgets the macro fails here rather than on the wrong limbs.
 */
#ifndef AKD_FIELD_H
#define AKD_FIELD_H

#if !defined(AKD_FIELD_LIMBS)
#error "define AKD_FIELD_LIMBS (5 or 10) to choose the field's limb layout"
#elif AKD_FIELD_LIMBS == 5
#include "fe25519_51.h"
#elif AKD_FIELD_LIMBS == 10
#include "fe25519_10.h"
#else
#error "AKD_FIELD_LIMBS must be 5 or 10"
#endif

#endif
