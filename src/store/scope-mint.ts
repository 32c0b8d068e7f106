import {
  sql,
  type DeleteQueryBuilder,
  type DeleteResult,
  type Insertable,
  type InsertQueryBuilder,
  type InsertResult,
  type SelectQueryBuilder,
  type UpdateQueryBuilder,
  type UpdateResult,
} from 'kysely';
import type { Db, Handle, OneStatement, Trx } from './db.ts';
import type { Database } from './schema.ts';
import { HANDLE, handleOf } from './scope-handle.ts';

/*
 * Where tenancy is minted (Structure II, item 1): the only module that makes a `MerchantScope`
 * from a merchant's number or brands a raw number as a scoped id. dependency-cruiser's
 * `tenancy-minted-in-store` (.dependency-cruiser.cjs) refuses an import of it from outside
 * src/store/, so a scope outside the store comes from one of two places only: the edge's one
 * function each (store/edge-scopes.ts: the API token, the manager's session, the operator's route,
 * the CLI command) or a store lookup, which hands back the row's scope (`owner`) with the id it
 * resolved. Everything else of tenancy (the types, `allMerchants`, `transactionIn`, `within`) is
 * store/tenancy.ts, which re-exports it from here.
 */

/** The tables a merchant owns rows of: exactly those with a `merchant_id` column. */
export type MerchantOwnedTable = {
  [T in keyof Database]: Database[T] extends { merchant_id: number } ? T : never;
}[keyof Database] &
  string;

/**
 * Query builders for merchant-owned tables, already restricted to one merchant (SPEC §2.3).
 *
 * Storage functions that serve merchants take a `MerchantScope`, not a bare handle, so a query
 * that forgets the merchant cannot be written: another merchant's row is simply not there, and
 * the caller answers exactly as for a missing id. See docs/decisions.md, "Tenancy".
 */
export interface MerchantScope<H extends Handle = Handle> {
  readonly merchantId: number;
  /**
   * The handle underneath (a transaction when the scope was made from one), for the store's
   * functions on tables that are not merchant-owned: catalogue, warehouses, stock, audit.
   * `MerchantScope<Trx>` is a scope inside a transaction: what locks or writes asks for that.
   * Closed to code outside store/: only store/scope-handle.ts's `handleOf` reads it (that module
   * is forbidden outside store/ by dependency-cruiser), so a service cannot step out of the scope.
   */
  readonly [HANDLE]: H;
  /** `SELECT … FROM table WHERE table.merchant_id = <merchant>`; add joins and filters as usual. */
  // biome-ignore lint/complexity/noBannedTypes: `{}` is Kysely's "nothing selected yet"
  selectFrom<T extends MerchantOwnedTable>(table: T): SelectQueryBuilder<Database, T, {}>;
  /** `UPDATE table … WHERE table.merchant_id = <merchant>`. */
  updateTable<T extends MerchantOwnedTable>(table: T): UpdateQueryBuilder<Database, T, T, UpdateResult>;
  /** `DELETE FROM table WHERE table.merchant_id = <merchant>`. */
  deleteFrom<T extends MerchantOwnedTable>(table: T): DeleteQueryBuilder<Database, T, DeleteResult>;
  /** `INSERT INTO table` with `merchant_id` filled in: the values cannot name another merchant. */
  insertInto<T extends MerchantOwnedTable>(
    table: T,
    values: Omit<Insertable<Database[T]>, 'merchant_id'> | Omit<Insertable<Database[T]>, 'merchant_id'>[],
  ): InsertQueryBuilder<Database, T, InsertResult>;
}

/**
 * The one constructor of a merchant's scope from its number. Called by store/edge-scopes.ts (the
 * edge's functions) and by the store's lookups (`ownedBy`); services take the scope, never the
 * merchant's number.
 */
export function forMerchant<H extends Handle>(handle: H, merchantId: number): MerchantScope<H> {
  if (!Number.isSafeInteger(merchantId) || merchantId <= 0) throw new Error(`forMerchant: bad merchant id ${merchantId}`);
  return scopeOf(handle, merchantId);
}

/**
 * `forMerchant` without its check of the id, for the builder of a prepared query
 * (`preparedForMerchant`), which sees a placeholder where the id goes: the real id was checked
 * when the caller's scope was made.
 */
export function scopeOf<H extends Handle>(handle: H, merchantId: number): MerchantScope<H> {
  return new Scope(handle, merchantId);
}

/**
 * A merchant's scope. Its `merchantId` is a plain property, so a copy with another number
 * (`{ ...scope, merchantId: victim }`) would type-check as a `MerchantScope`: the store never
 * trusts that property, it reads the merchant with `merchantIdOf`, from a private field a copy
 * does not have (a spread copies no private field), and throws for anything else
 * (test/store/tenancy.test.ts). A private field rather than a WeakMap of the scopes made: a
 * request makes a few short-lived scopes, and a WeakMap's entries cost the garbage collector a few
 * per cent of an order's CPU (docs/performance.md).
 */
class Scope<H extends Handle> implements MerchantScope<H> {
  readonly #merchantId: number;
  readonly merchantId: number;
  readonly [HANDLE]: H;
  readonly selectFrom: MerchantScope<H>['selectFrom'];
  readonly updateTable: MerchantScope<H>['updateTable'];
  readonly deleteFrom: MerchantScope<H>['deleteFrom'];
  readonly insertInto: MerchantScope<H>['insertInto'];

  constructor(handle: H, merchantId: number) {
    // Kysely cannot type a column reference on a table chosen by a type parameter; the public
    // signatures above carry the types, the bodies work on the untyped builder.
    // biome-ignore lint/suspicious/noExplicitAny: see the comment above
    const db = handle as any;
    const owner = (table: string) => sql.ref(`${table}.merchant_id`);
    this.#merchantId = merchantId;
    this.merchantId = merchantId;
    this[HANDLE] = handle;
    this.selectFrom = (table) => db.selectFrom(table).where(owner(table), '=', merchantId);
    this.updateTable = (table) => db.updateTable(table).where(owner(table), '=', merchantId);
    this.deleteFrom = (table) => db.deleteFrom(table).where(owner(table), '=', merchantId);
    this.insertInto = (table, values) => {
      const rows = (Array.isArray(values) ? values : [values]).map((v) => ({ ...v, merchant_id: merchantId }));
      return db.insertInto(table).values(rows);
    };
  }

  /** The merchant a scope was made for: throws for an object this class did not make. */
  static merchantOf(scope: object): number {
    if (!(#merchantId in scope)) throw new Error('not a merchant scope the store made (a copy of one is not)');
    return (scope as Scope<Handle>).#merchantId;
  }
}

/** The merchant a scope was made for (store/ only): throws for an object that was not made here. */
export const merchantIdOf = (scope: MerchantScope): number => Scope.merchantOf(scope);

/**
 * The operator's view of every merchant's rows. Only `allMerchants(db)` makes one, so a reader of
 * merchant-owned tables is either one merchant's scope or this, said out loud: a merchant route
 * that passed `store.db` where a scope belongs would not compile.
 */
export interface AllMerchants {
  readonly allMerchants: true;
  /** The bare handle, read only by store/ (`handleOf`, store/scope-handle.ts), as for `MerchantScope`. */
  readonly [HANDLE]: Handle;
}

export const allMerchants = (handle: Handle): AllMerchants => ({ allMerchants: true, [HANDLE]: handle });

/** Who is reading merchant-owned rows: one merchant, or (explicitly) the operator. */
export type TenantScope = MerchantScope | AllMerchants;

/** True for a merchant's scope, false for the operator's. */
export const isMerchantScope = (r: TenantScope): r is MerchantScope => 'merchantId' in r;

declare const resolved: unique symbol;
/**
 * An order id found through a tenant scope (`resolveOrderId`, a scoped page or lock, the
 * operator's explicit all-merchants search). An order's child rows (its split orders and lines,
 * its refunds, its webhook deliveries) are read only by such an id, so a read of another
 * merchant's children by a raw id does not compile. Only the store's readers make one.
 */
export type ScopedOrderId = number & { readonly [resolved]: 'order' };

/** For store readers only: the id a scoped query just returned. */
export const resolvedOrderId = (id: number): ScopedOrderId => id as ScopedOrderId;

/**
 * A refund id found through a tenant scope (`resolveRefund(scope, id)`, the operator's
 * `resolveRefund(allMerchants(db), id)`, a scoped list or page, the worker's claim, the refund a
 * scoped request just wrote). A refund's rows are locked, decided, written and read by such an
 * id (`lockPendingRefund`, `finishRefund`, `refundItems`, `decideRefund`), so a refund number
 * from a request reaches none of them without a lookup. Only the store's readers make one.
 */
export type ScopedRefundId = number & { readonly [resolved]: 'refund' };

/** For store readers only: the refund id a scoped query just returned. */
export const resolvedRefundId = (id: number): ScopedRefundId => id as ScopedRefundId;

/**
 * A split-order id found through a tenant scope (`resolveSplitOrder(scope, id)`, the operator's
 * `resolveSplitOrder(allMerchants(db), id)`, the splits of a `ScopedOrderId`). A split order's rows
 * are locked, shipped, delivered, cancelled and its items read by such an id (`markShipped`,
 * `markDelivered`, `cancelSplitOrder`, `hasPendingRefund`, `itemsLeft`). Only the store's readers
 * make one.
 */
export type ScopedSplitId = number & { readonly [resolved]: 'split' };

/** For store readers only: the split-order id a scoped query just returned. */
export const resolvedSplitId = (id: number): ScopedSplitId => id as ScopedSplitId;

/**
 * A claim id found through a tenant scope (`resolveClaim(scope, claimNo)`, the operator's
 * `resolveClaim(allMerchants(db), claimNo)`, a scoped page). A claim's rows are changed, resolved
 * and read by such an id. Only the store's readers make one.
 */
export type ScopedClaimId = number & { readonly [resolved]: 'claim' };

/** For store readers only: the claim id a scoped query just returned. */
export const resolvedClaimId = (id: number): ScopedClaimId => id as ScopedClaimId;

/**
 * Runs `work` in one transaction with the same merchant's scope over it: how a service that was
 * handed a scope on the database makes the writes that need `MerchantScope<Trx>`.
 */
export function transactionIn<T>(scope: MerchantScope<Db>, work: (scope: MerchantScope<Trx>) => Promise<T>): Promise<T> {
  return handleOf(scope)
    .transaction()
    .execute((trx) => work(scopeOf(trx, merchantIdOf(scope))));
}

/** The same merchant's scope over a transaction the caller already opened. */
export const within = (scope: MerchantScope, trx: Trx): MerchantScope<Trx> => scopeOf(trx, merchantIdOf(scope));

/** The same merchant's scope over the database outside any transaction, for a write that is one statement (`OneStatement`). */
export const outsideTransaction = (scope: MerchantScope, db: Db): MerchantScope<OneStatement> => scopeOf(db as OneStatement, merchantIdOf(scope));

/**
 * A row found by a store lookup, with its merchant's scope over the handle the lookup used: how a
 * service that found a row for the operator (`allMerchants`) or by a worker's claim acts as that
 * row's merchant (`within(row.owner, trx)`) without making a scope from the row's number.
 */
export type Owned<R, H extends Handle = Handle> = R & { readonly owner: MerchantScope<H> };

/** For store lookups only: `row` with `owner`, the scope of `merchantId` over `handle`. */
export function ownedBy<R extends object, H extends Handle>(handle: H, merchantId: number, row: R): Owned<R, H> {
  return { ...row, owner: forMerchant(handle, merchantId) };
}
