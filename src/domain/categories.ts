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
