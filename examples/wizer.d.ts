// @bytecodealliance/wizer ships no types: its default export is the path of the wizer binary for this platform.
declare module '@bytecodealliance/wizer' {
  const path: string;
  export default path;
}
