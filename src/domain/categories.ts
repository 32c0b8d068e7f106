/**
 * Returns the ids (among `changed`) whose parent chain does not reach the root: a missing parent
 * or a cycle. `parentOf` maps every stored category id to its parent id (0 = root).
 */
export function brokenCategoryChains(parentOf: Map<number, number>, changed: number[]): { id: number; reason: 'missing_parent' | 'cycle' }[] {
  const broken: { id: number; reason: 'missing_parent' | 'cycle' }[] = [];
  for (const id of changed) {
    const seen = new Set<number>([id]);
    let current = parentOf.get(id) ?? 0;
    while (current !== 0) {
      if (seen.has(current)) {
        broken.push({ id, reason: 'cycle' });
        break;
      }
      if (!parentOf.has(current)) {
        broken.push({ id, reason: 'missing_parent' });
        break;
      }
      seen.add(current);
      current = parentOf.get(current)!;
    }
  }
  return broken;
}

export interface CategoryRow {
  id: number;
  name: string;
  parentId: number;
  imgUrl: string | null;
}

export interface TreeNode {
  categoryId: number;
  name: string;
  parentId: number;
  level: number;
  fullCategoryId: string;
  imgUrl: string | null;
  child: TreeNode[];
}

/**
 * Rows → the tree of SPEC §3: roots have parentId 0 and level 1; `fullCategoryId` lists the ids
 * from the root ("3600/3516"); siblings in id order. Rows whose chain does not reach the root
 * (refused on write, so only after manual edits) are left out rather than looping.
 */
export function buildCategoryTree(rows: CategoryRow[]): TreeNode[] {
  const children = new Map<number, CategoryRow[]>();
  for (const r of [...rows].sort((a, b) => a.id - b.id)) {
    const list = children.get(r.parentId) ?? [];
    list.push(r);
    children.set(r.parentId, list);
  }
  const visit = (r: CategoryRow, level: number, path: string, seen: Set<number>): TreeNode => {
    const fullCategoryId = path ? `${path}/${r.id}` : String(r.id);
    seen.add(r.id);
    const child = (children.get(r.id) ?? []).filter((c) => !seen.has(c.id)).map((c) => visit(c, level + 1, fullCategoryId, seen));
    return { categoryId: r.id, name: r.name, parentId: r.parentId, level, fullCategoryId, imgUrl: r.imgUrl, child };
  };
  const seen = new Set<number>();
  return (children.get(0) ?? []).map((r) => visit(r, 1, '', seen));
}

/** The ids of a category and every category below it (empty when the id is unknown). */
export function subtreeIds(rows: { id: number; parentId: number }[], rootId: number): number[] {
  if (!rows.some((r) => r.id === rootId)) return [];
  const children = new Map<number, number[]>();
  for (const r of rows) children.set(r.parentId, [...(children.get(r.parentId) ?? []), r.id]);
  const out = [rootId];
  const seen = new Set(out);
  for (let i = 0; i < out.length; i++) {
    for (const id of children.get(out[i]) ?? []) {
      if (!seen.has(id)) {
        seen.add(id);
        out.push(id);
      }
    }
  }
  return out;
}
