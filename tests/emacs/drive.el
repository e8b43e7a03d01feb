;;; drive.el --- drive a real Emacs (batch) as a user would -*- lexical-binding: t -*-
;; CONFIG holds README's Eglot blocks (the user's init file). Open SCRIPT, M-x eglot,
;; M-x bottleneck-profile; then read back what the screen shows (Flymake's diagnostics,
;; the hover at HOVER_LINE, the echo area) into OUT as JSON. When LONG is set,
;; profile that script too and kill Emacs once it runs (it writes STARTED): the pids of
;; Emacs's descendants are written first, for the test to check that none is left.
(require 'json)
(require 'subr-x)
(load (getenv "CONFIG") nil t)
(require 'eglot)
(require 'flymake)

(defvar drive-messages nil "What the echo area showed.")
(advice-add 'message :after
            (lambda (format &rest args)
              (when format (push (apply #'format-message format args) drive-messages))))
(defvar drive-timeout (string-to-number (getenv "TIMEOUT_S")))
(defvar drive-out nil)

(defun drive-save ()
  (with-temp-file (getenv "OUT")
    (insert (json-encode (cons (cons 'messages (reverse drive-messages)) drive-out)))))

(defun drive-fail (why)
  (push (cons 'error why) drive-out)
  (drive-save)
  (kill-emacs 1))

(defun drive-wait (pred)
  (let ((end (+ (float-time) drive-timeout)))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.05))
    (funcall pred)))

(defun drive-descendants (root)
  (let ((found nil) (todo (list root)))
    (while todo
      (let ((pid (pop todo)))
        (dolist (other (list-system-processes))
          (when (eql (alist-get 'ppid (process-attributes other)) pid)
            (push other found)
            (push other todo)))))
    found))

(find-file (getenv "SCRIPT"))
(python-mode)
(apply #'eglot (eglot--guess-contact))  ; M-x eglot
(unless (drive-wait (lambda () (eglot-current-server)))
  (drive-fail "eglot did not connect"))
(flymake-start)  ; what Emacs's command loop does after M-x eglot
(bottleneck-profile)
(unless (drive-wait (lambda () (seq-find (lambda (m) (string-prefix-p "bottleneck: " m)) drive-messages)))
  (drive-fail "no summary in the echo area"))
(unless (drive-wait (lambda () (seq-find (lambda (d) (string-match-p "op CPU" (flymake-diagnostic-text d)))
                                         (flymake-diagnostics))))
  (drive-fail "no diagnostic with the cpu pass's figures"))

(let (diagnostics hot)
  (dolist (d (flymake-diagnostics))
    (let ((line (line-number-at-pos (flymake-diagnostic-beg d))))
      (push `((line . ,line)
              (type . ,(symbol-name (flymake-diagnostic-type d)))
              (text . ,(flymake-diagnostic-text d)))
            diagnostics)
      (when (eql line (string-to-number (getenv "HOVER_LINE")))
        (setq hot d))))
  (push (cons 'diagnostics (vconcat diagnostics)) drive-out)
  (when hot  ; the hover eldoc shows there
    (save-excursion
      (goto-char (flymake-diagnostic-beg hot))
      (let ((hover (jsonrpc-request
                    (eglot-current-server) :textDocument/hover
                    `(:textDocument (:uri ,(eglot--path-to-uri buffer-file-name))
                      :position (:line ,(1- (line-number-at-pos)) :character ,(current-column))))))
        (push (cons 'hover (plist-get (plist-get hover :contents) :value)) drive-out)))))

(when-let ((long (getenv "LONG")))
  (find-file long)
  (python-mode)
  (eglot--maybe-activate-editing-mode)  ; the server manages this buffer too
  (bottleneck-profile)
  (unless (drive-wait (lambda () (file-exists-p (getenv "STARTED"))))
    (drive-fail "the long script did not start"))
  (push (cons 'pids (vconcat (drive-descendants (emacs-pid)))) drive-out))
(drive-save)
(kill-emacs 0)
