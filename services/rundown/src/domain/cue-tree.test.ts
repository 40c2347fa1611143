import { describe, expect, it } from 'vitest';
import { CueTree, playableDurationMs, playableIds, skippedBy, type TimingFacts } from './cue-tree.js';
import type { CueType } from './model.js';

const types = new Map<string, CueType>([
  ['a', 'cue'],
  ['g', 'group'],
  ['c1', 'cue'],
  ['c2', 'heading'],
  ['b', 'cue'],
  ['h', 'heading'],
]);
const typeOf = (id: string) => types.get(id);
// a, g [c1, c2], b, h
const sample = () =>
  CueTree.from([{ id: 'a' }, { id: 'g', children: [{ id: 'c1' }, { id: 'c2' }] }, { id: 'b' }, { id: 'h' }]);
const order = (tree: CueTree) => tree.displayOrder().map((r) => (r.parent_id ? `${r.parent_id}/${r.id}` : r.id));

/** Matches a thrown catalogue error by code and, when given, its details. */
const fault = (code: string, details?: unknown) => expect.objectContaining({ code, ...(details ? { details } : {}) });

describe('CueTree', () => {
  it('lists a group then its children, and stores children only on non-empty groups', () => {
    const tree = sample();
    expect(order(tree)).toEqual(['a', 'g', 'g/c1', 'g/c2', 'b', 'h']);
    tree.remove('c1');
    tree.remove('c2');
    expect(tree.toNodes()).toEqual([{ id: 'a' }, { id: 'g' }, { id: 'b' }, { id: 'h' }]);
    expect(tree.size).toBe(4);
  });

  it('places a new cue at the root start and end, and at a group’s start and end', () => {
    const tree = sample();
    tree.place('n1', 'cue', { kind: 'start', group: null }, typeOf);
    tree.place('n2', 'cue', { kind: 'end', group: null }, typeOf);
    tree.place('n3', 'heading', { kind: 'start', group: 'g' }, typeOf);
    tree.place('n4', 'cue', { kind: 'end', group: 'g' }, typeOf);
    expect(order(tree)).toEqual(['n1', 'a', 'g', 'g/n3', 'g/c1', 'g/c2', 'g/n4', 'b', 'h', 'n2']);
  });

  it('places before/after a cue as its sibling, inside the target’s group when it has one', () => {
    const tree = sample();
    tree.place('n1', 'cue', { kind: 'after', cueId: 'c1' }, typeOf);
    tree.place('n2', 'cue', { kind: 'before', cueId: 'a' }, typeOf);
    tree.place('n3', 'group', { kind: 'after', cueId: 'g' }, typeOf);
    expect(order(tree)).toEqual(['n2', 'a', 'g', 'g/c1', 'g/n1', 'g/c2', 'n3', 'b', 'h']);
    expect(tree.parentOf('n1')).toBe('g');
  });

  it('moves an existing cue, out of and into groups, and a group with its children', () => {
    const tree = sample();
    tree.place('c2', 'heading', { kind: 'end', group: null }, typeOf);
    tree.place('b', 'cue', { kind: 'before', cueId: 'c1' }, typeOf);
    tree.place('g', 'group', { kind: 'after', cueId: 'h' }, typeOf);
    expect(order(tree)).toEqual(['a', 'h', 'g', 'g/b', 'g/c1', 'c2']);
    expect(tree.size).toBe(6);
  });

  it('refuses a group inside a group, a target group that is not one, and a cue relative to itself', () => {
    const tree = sample();
    expect(() => tree.place('n', 'group', { kind: 'after', cueId: 'c1' }, typeOf)).toThrow(fault('cues.invalid_position'));
    expect(() => tree.place('n', 'group', { kind: 'end', group: 'g' }, typeOf)).toThrow(fault('cues.invalid_position'));
    expect(() => tree.place('n', 'cue', { kind: 'end', group: 'h' }, typeOf)).toThrow(fault('cues.invalid_position'));
    expect(() => tree.place('a', 'cue', { kind: 'after', cueId: 'a' }, typeOf)).toThrow(fault('cues.invalid_position'));
    // A group placed beside its own child would land inside itself, whatever its new type.
    expect(() => tree.place('g', 'cue', { kind: 'after', cueId: 'c1' }, typeOf)).toThrow(fault('cues.invalid_position'));
    expect(order(tree)).toEqual(['a', 'g', 'g/c1', 'g/c2', 'b', 'h']);
  });

  it('names a missing target', () => {
    const tree = sample();
    for (const position of [
      { kind: 'before', cueId: 'zz' },
      { kind: 'after', cueId: 'zz' },
      { kind: 'start', group: 'zz' },
    ] as const) {
      expect(() => tree.place('n', 'cue', position, typeOf)).toThrow(fault('cues.position_target_not_found', { cue_id: 'zz' }));
    }
  });
});

describe('CueTree.fromReorder', () => {
  it('builds the tree from the items, children following their group in body order', () => {
    const tree = CueTree.fromReorder(
      [
        { id: 'c2', parent_id: 'g' },
        { id: 'h', parent_id: null },
        { id: 'g', parent_id: null },
        { id: 'a', parent_id: 'g' },
        { id: 'b', parent_id: null },
        { id: 'c1', parent_id: null },
      ],
      types,
    );
    expect(order(tree)).toEqual(['h', 'g', 'g/c2', 'g/a', 'b', 'c1']);
  });

  it('reports every kind of fault at once', () => {
    expect(() =>
      CueTree.fromReorder(
        [
          { id: 'a', parent_id: null },
          { id: 'a', parent_id: null },
          { id: 'x', parent_id: null },
          { id: 'g', parent_id: null },
          { id: 'c1', parent_id: 'b' },
          { id: 'c2', parent_id: 'nope' },
          { id: 'h', parent_id: null },
        ],
        new Map([...types, ['g2', 'group']]),
      ),
    ).toThrow(
      fault('cues.invalid_reorder', {
        duplicates: ['a'],
        unknown_ids: ['x'],
        missing_ids: ['b', 'g2'],
        invalid_parents: [
          { id: 'c1', parent_id: 'b' },
          { id: 'c2', parent_id: 'nope' },
        ],
      }),
    );
    expect(() =>
      CueTree.fromReorder(
        [
          { id: 'g2', parent_id: null },
          { id: 'g', parent_id: 'g2' },
        ],
        new Map<string, CueType>([
          ['g', 'group'],
          ['g2', 'group'],
        ]),
      ),
    ).toThrow(fault('cues.invalid_reorder', { nested_groups: ['g'] }));
  });
});

describe('playable cues', () => {
  const facts = (entries: [string, Partial<TimingFacts>][]) =>
    new Map(entries.map(([id, f]) => [id, { type: types.get(id) ?? 'cue', skip: false, duration_ms: 1000, ...f }]));

  it('says who skips a cue: itself before its group', () => {
    expect(skippedBy({ skip: true }, { skip: true })).toBe('self');
    expect(skippedBy({ skip: false }, { skip: true })).toBe('group');
    expect(skippedBy({ skip: false }, undefined)).toBeNull();
  });

  it('plays cues of type cue in display order, leaving out headings, groups and skipped cues', () => {
    const tree = sample();
    const cues = facts([
      ['a', { duration_ms: 100 }],
      ['g', { duration_ms: 5000 }],
      ['c1', { duration_ms: 20 }],
      ['c2', {}],
      ['b', { duration_ms: 3 }],
      ['h', {}],
    ]);
    expect(playableIds(tree, cues)).toEqual(['a', 'c1', 'b']);
    expect(playableDurationMs(tree, cues)).toBe(123);
    cues.get('g')!.skip = true;
    cues.get('b')!.skip = true;
    expect(playableIds(tree, cues)).toEqual(['a']);
    expect(playableDurationMs(tree, cues)).toBe(100);
  });
});
