/*
 * The block methods' step phase over a range of rows (block_step.c): the machines' terms summed in machine
 * order and the method's update of X in place, as src/solvers/machines/blockShard.ts's stepRows does.
 */
#ifndef LINALG_BLOCK_STEP_H
#define LINALG_BLOCK_STEP_H

#include <node_api.h>

/* Adds blockStepLayout (a checked handle over the machines' supports) and blockStep to exports. */
void register_block_step(napi_env env, napi_value exports);

#endif
