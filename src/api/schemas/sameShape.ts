/**
 * Compile-time proof that a zod schema of this directory describes exactly the TypeScript type it
 * mirrors (the type is the one definition, in the layer that owns the shape: src/solvers or
 * src/jobs). Each schema file calls `assertSameShape<z.output<typeof XSchema>, X>(true)` once; a
 * field added, removed, made optional or nullable on one side only is then a `tsc` error naming
 * the field's path, e.g. "Argument of type 'boolean' is not assignable to parameter of type
 * '{ differsAt: "bounds.theorem4KappaALowerBound"; }'".
 */

/**
 * The JSON-relevant structure of a type: objects (interfaces, intersections, Record, Partial...)
 * become plain object types member by member, recursively; arrays and tuples stay arrays and
 * tuples. `readonly` is dropped (JSON has no such thing); `?` and `| null` are kept.
 */
export type Shape<T> = T extends object ? { -readonly [K in keyof T]: Shape<T[K]> } : T;

/** True when A and B are identical types (not merely mutually assignable: optional members count). */
export type Equals<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;

type PlainObject<T> = [T] extends [object] ? ([T] extends [readonly unknown[]] ? false : true) : false;

/** Whether member K of T may be left out. */
type IsOptional<T, K extends keyof T> = Record<never, never> extends Pick<T, K> ? true : false;

type Join<Path extends string, Key extends string> = Path extends '' ? Key : `${Path}.${Key}`;

type Here<Path extends string> = Path extends '' ? '(the root)' : Path;

/** D, or the path itself when D names nothing deeper. */
type OrHere<D, Path extends string> = [D] extends [never] ? Here<Path> : D;

/** Dotted paths (from `path`) at which the shapes of A and B differ; never when they are the same. */
export type ShapeDifferences<A, B, Path extends string = ''> =
  Equals<Shape<A>, Shape<B>> extends true
    ? never
    : Equals<Extract<A, null | undefined>, Extract<B, null | undefined>> extends false
      ? Here<Path>
      : OrHere<NonNullDifferences<NonNullable<A>, NonNullable<B>, Path>, Path>;

/** Where A and B, neither null nor undefined, differ inside: items of arrays, members of objects. */
type NonNullDifferences<A, B, Path extends string> = [A, B] extends [readonly (infer ItemA)[], readonly (infer ItemB)[]]
  ? ShapeDifferences<ItemA, ItemB, `${Path}[]`>
  : [PlainObject<A>, PlainObject<B>] extends [true, true]
    ? {
        [K in keyof A | keyof B]: K extends string
          ? K extends keyof A
            ? K extends keyof B
              ? Equals<Pick<Shape<A>, K>, Pick<Shape<B>, K>> extends true
                ? never
                : Equals<IsOptional<A, K>, IsOptional<B, K>> extends false
                  ? `${Join<Path, K>} (optional on one side only)`
                  : ShapeDifferences<A[K], B[K], Join<Path, K>>
              : `${Join<Path, K>} (only in the schema)`
            : `${Join<Path, K>} (only in the type)`
          : never;
      }[keyof A | keyof B]
    : never;

/** What `assertSameShape` accepts: `true` when the shapes agree, else an object naming where they differ. */
export type SameShape<Schema, Type> = [ShapeDifferences<Schema, Type>] extends [never]
  ? true
  : { differsAt: ShapeDifferences<Schema, Type> };

/**
 * Compile-time check, no run-time effect: `assertSameShape<z.output<typeof Schema>, Type>(true)`
 * compiles only when the two shapes are the same.
 */
export function assertSameShape<Schema, Type>(proof: SameShape<Schema, Type>): void {
  void proof;
}
