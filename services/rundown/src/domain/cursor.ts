// Page cursors are shared with the cells context: one codec, in the shared library.
export { CursorCodec } from '@rundown/shared';
