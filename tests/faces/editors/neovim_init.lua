-- A minimal Neovim client for tests/faces/test_neovim.py: start `ranklint server`
-- on the current buffer, wait until its diagnostics arrive, write them to a file.
-- Neovim >= 0.8 has vim.lsp.start; Debian 12's 0.7 starts and attaches by hand.
local cmd = vim.fn.json_decode(vim.env.RANKLINT_SERVER_CMD)
local out = vim.env.RANKLINT_NVIM_OUT
local bufnr = vim.api.nvim_get_current_buf()
local config = { name = "ranklint", cmd = cmd, root_dir = vim.env.RANKLINT_NVIM_ROOT }
if vim.lsp.start then
  vim.lsp.start(config)
else
  local client_id = vim.lsp.start_client(config)
  vim.lsp.buf_attach_client(bufnr, client_id)
end
-- Polls the condition (no fixed sleep); false when the time runs out.
local arrived = vim.wait(60000, function()
  return #vim.diagnostic.get(bufnr) > 0
end, 20)
local lines = {}
if not arrived then
  table.insert(lines, "TIMEOUT: no diagnostics")
end
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  local lsp = (d.user_data and d.user_data.lsp) or {}
  table.insert(lines, string.format(
    "%s:%d:%d: %s %s [%s] %s",
    vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t"),
    d.lnum + 1,
    d.col + 1,
    vim.diagnostic.severity[d.severity],
    d.code or lsp.code or "",
    d.source or "",
    d.message
  ))
end
vim.fn.writefile(lines, out)
vim.cmd("qall!")
