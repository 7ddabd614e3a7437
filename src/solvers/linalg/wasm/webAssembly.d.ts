/**
 * The part of the WebAssembly JavaScript API that ../wasmRowKernels.ts uses. TypeScript declares it
 * in lib "dom", which this Node service does not load (@types/node only names WebAssembly.Module).
 */
declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  class Memory {
    constructor(descriptor: MemoryDescriptor);
    readonly buffer: ArrayBuffer | SharedArrayBuffer;
  }
  class Module {
    constructor(bytes: ArrayBufferView | ArrayBuffer);
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
  function validate(bytes: ArrayBufferView | ArrayBuffer): boolean;
}
