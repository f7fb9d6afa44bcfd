/**
 * 016: `members.instance`, the token of the process holding a member id (random per process
 * start), so a second process started with the same `MEMBER_ID` is told apart from the first and
 * refused while the first's record is live (heartbeatMember's compare-and-set). Rows written
 * before have NULL: any instance may take them over. Adding a nullable column rewrites no rows.
 */
export const up = `
ALTER TABLE members ADD COLUMN instance TEXT;
`;
