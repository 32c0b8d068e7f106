import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildCategoryTree, subtreeIds } from '../../src/domain/categories.ts';
import { decodeCursor, encodeCursor } from '../../src/services/stock-feed.service.ts';

describe('category tree', () => {
  const rows = [
    { id: 3516, name: 'Mugs', parentId: 3600, imgUrl: null },
    { id: 3600, name: 'Kitchen', parentId: 0, imgUrl: 'k.png' },
    { id: 1, name: 'Garden', parentId: 0, imgUrl: null },
    { id: 7, name: 'Lost', parentId: 8, imgUrl: null },
    { id: 8, name: 'Loop', parentId: 7, imgUrl: null },
  ];

  it('nests children under parents with level and the id path from the root', () => {
    const tree = buildCategoryTree(rows);
    assert.deepEqual(
      tree.map((n) => n.categoryId),
      [1, 3600],
    );
    assert.deepEqual(tree[1].child[0], { categoryId: 3516, name: 'Mugs', parentId: 3600, level: 2, fullCategoryId: '3600/3516', imgUrl: null, child: [] });
  });

  it('collects a subtree and knows nothing of unknown ids', () => {
    assert.deepEqual(subtreeIds(rows, 3600), [3600, 3516]);
    assert.deepEqual(subtreeIds(rows, 3516), [3516]);
    assert.deepEqual(subtreeIds(rows, 99), []);
    assert.deepEqual(subtreeIds(rows, 7).sort(), [7, 8], 'a cycle ends');
  });
});

describe('feed cursor', () => {
  it('round-trips and refuses anything else', () => {
    assert.deepEqual(decodeCursor(encodeCursor({ seq: 12, id: 345 })), { seq: 12, id: 345 });
    for (const bad of ['', 'now', 'sc1_', `sc1_${Buffer.from('1.x').toString('base64url')}`, Buffer.from('1.2').toString('base64url')])
      assert.equal(decodeCursor(bad), null, bad);
  });
});
