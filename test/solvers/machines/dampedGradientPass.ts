/**
 * A machine pass defined outside src/ (for ./machinePass.test.ts): a damped gradient term. Each
 * machine writes omega A_i^T (A_i x - b_i) on the global columns (its region is n long) and
 * |A_i x - b_i|^2, through the MachineOperator products only, so one step serves both storages.
 * Registered when loaded: the fleet's worker threads import this module by its URL.
 */
import type { MachineOperator } from '../../../src/solvers/machines/machine.js';
import { registerMachinePass, type StepOn } from '../../../src/solvers/machines/machinePass.js';

// An object type, not an interface: so that it is a PassParameters (a record of numbers).
export type DampingParameters = { readonly omega: number };

const dampedGradientTerm: StepOn<MachineOperator, DampingParameters> = (machine, { omega }, x, term, offset, scalars, at) => {
  const residual = new Float64Array(machine.p);
  scalars[at] = machine.residual(x, residual, 0);
  term.fill(0, offset, offset + x.length);
  machine.multiplyTransposeAdd(residual, 0, omega, term, offset);
};

export const DAMPED_GRADIENT_PASS = registerMachinePass<DampingParameters>({
  name: 'test:damped-gradient',
  module: import.meta.url,
  scalarsPerMachine: 1,
  steps: [{ dense: dampedGradientTerm, csr: dampedGradientTerm }],
});
