-- Drives a real Neovim, headless, as a user would: docs/editors.md's Neovim block is the test's
-- after/ftplugin/python.lua (on 'runtimepath'); open a script, press <leader>bp, then read
-- what the screen would show (diagnostics, code lenses as drawn, the hover, the progress,
-- :messages) into OUT as JSON.
-- Then, when LONG is set, profile that script too and quit while it runs (once it wrote
-- STARTED): the test checks that no process is left (the pids seen are written first).
local out = { progress = {}, pids = {} }
local function save()
  vim.fn.writefile({ vim.json.encode(out) }, os.getenv("OUT"))
end
local function fail(why)
  out.error = why
  out.messages = vim.split(vim.fn.execute("messages"), "\n", { trimempty = true })
  save()
  vim.cmd("qa!")
end
local timeout = tonumber(os.getenv("TIMEOUT_MS"))

vim.api.nvim_create_autocmd("LspProgress", {
  callback = function(args)
    local value = args.data.params.value
    table.insert(out.progress, { kind = value.kind, title = value.title, message = value.message })
  end,
})

vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("SCRIPT")))
if not vim.wait(timeout, function()
  local client = vim.lsp.get_clients({ name = "bottleneck" })[1]
  return client ~= nil and client.initialized
end, 50) then
  return fail("the server did not initialize")
end

local function ended()
  for _, p in ipairs(out.progress) do
    if p.kind == "end" then
      return true
    end
  end
  return false
end
vim.cmd("normal \\bp")
if not vim.wait(timeout, ended, 50) then
  return fail("no progress end")
end
-- the last publish fires DiagnosticChanged, and the block's autocmd asks for the lenses
if not vim.wait(timeout, function()
  for _, lens in ipairs(vim.lsp.codelens.get(0)) do
    if lens.command and lens.command.title:find("op CPU", 1, true) then
      return true
    end
  end
  return false
end, 50) then
  return fail("no lens with the cpu pass's figures")
end

out.diagnostics = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(out.diagnostics, { lnum = d.lnum, col = d.col, severity = d.severity, message = d.message, source = d.source, code = d.code })
end
table.sort(out.diagnostics, function(a, b) return a.severity < b.severity or (a.severity == b.severity and a.lnum < b.lnum) end)
out.lenses = {}
for _, lens in ipairs(vim.lsp.codelens.get(0)) do
  table.insert(out.lenses, { line = lens.range.start.line, title = lens.command and lens.command.title })
end
-- the lenses as drawn: Neovim's virtual text on each line
out.drawn = {}
for _, ns in pairs(vim.api.nvim_get_namespaces()) do
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
    local chunks = mark[4].virt_text or {}
    local text = {}
    for _, chunk in ipairs(chunks) do
      table.insert(text, chunk[1])
    end
    if #text > 0 then
      table.insert(out.drawn, { line = mark[2], text = table.concat(text) })
    end
  end
end
local first = out.diagnostics[1]
local hover = vim.lsp.buf_request_sync(0, "textDocument/hover", {
  textDocument = { uri = vim.uri_from_bufnr(0) },
  position = { line = first and first.lnum or 0, character = first and first.col or 0 },
}, timeout)
for _, answer in pairs(hover or {}) do
  out.hover = answer.result and answer.result.contents.value
end
out.status = vim.lsp.status()
-- the hot line's lens run (what `vim.lsp.codelens.run()` on that line does): the server asks
-- Neovim to show the full report (window/showDocument), which opens it here
if first then
  vim.api.nvim_win_set_cursor(0, { first.lnum + 1, 0 })
  vim.lsp.codelens.run()
  if vim.wait(timeout, function() return vim.api.nvim_buf_get_name(0):find("%.bottleneck%.txt$") ~= nil end, 50) then
    out.report_name = vim.fs.basename(vim.api.nvim_buf_get_name(0))
    out.report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  end
end

local long = os.getenv("LONG")
if long then
  vim.cmd("edit " .. vim.fn.fnameescape(long))
  vim.cmd("normal \\bp")
  -- the script writes STARTED when it runs: its pass exists by then
  if not vim.wait(timeout, function()
    return vim.uv.fs_stat(os.getenv("STARTED")) ~= nil
  end, 50) then
    return fail("the long script did not start")
  end
  -- Neovim's children (the server), and theirs (the fork server, the pass)
  local todo = { vim.fn.getpid() }
  while #todo > 0 do
    local pid = table.remove(todo)
    for _, child in ipairs(vim.api.nvim_get_proc_children(pid)) do
      table.insert(out.pids, child)
      table.insert(todo, child)
    end
  end
end
out.messages = vim.split(vim.fn.execute("messages"), "\n", { trimempty = true })
save()
vim.cmd("qa!")
